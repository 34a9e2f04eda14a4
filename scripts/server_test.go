package scripts_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/internal/temporaltest"
)

// TestProductionLikeServerStarts: `AGENTREE_TEMPORAL=server services.sh up`
// on private ports and a private data directory brings up the Temporal
// server on PostgreSQL (building it into bin/ on first use). A workflow
// carrying Agentree's search attributes runs through it to completion;
// its execution is a row of the `temporal` database, the search attributes
// are registered as Keyword, and visibility (PostgreSQL too) finds the
// workflow by one of them. `down` stops both servers.
func TestProductionLikeServerStarts(t *testing.T) {
	s := newPrivateServices(t)
	s.run(t, 20*time.Minute, "up")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tc, err := client.Dial(client.Options{HostPort: s.temporalAddr(), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	defer tc.Close()

	const queue = "production-like"
	w := worker.New(tc, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(greetWorkflow, workflow.RegisterOptions{Name: "greet"})
	w.RegisterActivity(greet)
	require.NoError(t, w.Start())
	defer w.Stop()

	id := "production-like-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	org := "org-" + id
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(aclient.SearchOrg.ValueSet(org), aclient.SearchKind.ValueSet("greet")),
	}, "greet", "postgres")
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	require.Equal(t, "hello, postgres", out)

	// The history is the server's, in PostgreSQL.
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://agentree@127.0.0.1:%d/temporal?sslmode=disable", s.pgPort))
	require.NoError(t, err)
	defer conn.Close(context.WithoutCancel(ctx))
	var rows int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM executions WHERE workflow_id = $1", id).Scan(&rows))
	require.Equal(t, 1, rows, "the workflow's execution row in the temporal database")

	list, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	require.NoError(t, err)
	for _, name := range aclient.SearchAttributeNames {
		require.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, list.CustomAttributes[name], "search attribute %s", name)
	}

	// Visibility is eventually consistent: poll until it lists the run.
	query := fmt.Sprintf("%s = '%s'", aclient.SearchOrg.GetName(), org)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		found, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		require.NoError(t, err)
		if len(found.Executions) == 1 && found.Executions[0].Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			require.Equal(t, id, found.Executions[0].Execution.WorkflowId)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("visibility never listed %s by %s: %v", id, query, ctx.Err())
		case <-tick.C:
		}
	}
}

func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, greet, name).Get(ctx, &out)
	return out, err
}

func greet(_ context.Context, name string) (string, error) { return "hello, " + name, nil }

// privateServices is services.sh on a data directory and ports of the
// test's own, so it never touches the services `make up` runs (which
// `make test` uses beside it).
type privateServices struct {
	data                 string
	pgPort, temporalPort int
}

func newPrivateServices(t *testing.T) privateServices {
	t.Helper()
	data := t.TempDir()
	// As root PostgreSQL runs as the postgres user, which must reach the
	// cluster's directory under the test's (0700) temporary directories.
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chmod(filepath.Dir(data), 0o755))
		require.NoError(t, os.Chmod(data, 0o755))
	}
	temporalPort, err := temporaltest.FreeServerPorts()
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pgPort := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	s := privateServices{data: data, pgPort: pgPort, temporalPort: temporalPort}
	t.Cleanup(func() { s.run(t, 2*time.Minute, "down") })
	return s
}

func (s privateServices) temporalAddr() string { return "127.0.0.1:" + strconv.Itoa(s.temporalPort) }

// run runs `services.sh cmd` in server mode and fails the test if it fails.
func (s privateServices) run(t *testing.T, timeout time.Duration, cmd string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "services.sh", cmd)
	// The services `make test` runs are taken as given when their
	// addresses are set: the script must start its own.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "DATABASE_URL" && k != "TEMPORAL_ADDRESS" && !strings.HasPrefix(k, "AGENTREE_") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, "AGENTREE_TEMPORAL=server", "AGENTREE_DATA="+s.data,
		"AGENTREE_PG_PORT="+strconv.Itoa(s.pgPort), "AGENTREE_TEMPORAL_PORT="+strconv.Itoa(s.temporalPort))
	start := time.Now()
	out, err := c.CombinedOutput()
	require.NoError(t, err, "services.sh %s:\n%s", cmd, out)
	t.Logf("services.sh %s took %s:\n%s", cmd, time.Since(start).Round(time.Millisecond), out)
}
