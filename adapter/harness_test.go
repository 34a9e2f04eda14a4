package adapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
)

// harness is one test's Agentree: a fresh schema, a Temporal client with
// the plugin and a worker on a task queue of its own.
type harness struct {
	t         testing.TB
	es        *entrystore.Store
	org       entrystore.Org
	tc        client.Client
	ac        *aclient.Client
	taskQueue string
	dbURL     string
}

// newHarness starts a worker in this process unless noWorker.
func newHarness(t testing.TB, opts adapter.Options, noWorker bool) *harness {
	t.Helper()
	return newHarnessVia(t, opts, noWorker, nil)
}

// newHarnessVia is newHarness whose worker reaches Postgres at the URL
// workerURL makes of the test's database URL (through a fault proxy, say);
// the test's own store, the client's, connects directly.
func newHarnessVia(t testing.TB, opts adapter.Options, noWorker bool, workerURL func(string) string, tune ...func(*pgxpool.Config)) *harness {
	t.Helper()
	return newHarnessAt(t, pgtest.URL(t), opts, noWorker, workerURL, tune...)
}

// newHarnessAt is newHarnessVia on a database the test has set up itself
// (migrated by another build, say).
func newHarnessAt(t testing.TB, dbURL string, opts adapter.Options, noWorker bool, workerURL func(string) string, tune ...func(*pgxpool.Config)) *harness {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	es := entrystore.New(pool)
	org, err := es.CreateOrg(context.Background(), "test-"+uuid.NewString()[:8], "test")
	require.NoError(t, err)
	opts.Store = es
	if workerURL != nil {
		wcfg, err := pgxpool.ParseConfig(workerURL(dbURL))
		require.NoError(t, err)
		for _, f := range tune {
			f(wcfg)
		}
		wpool, err := pgxpool.NewWithConfig(context.Background(), wcfg)
		require.NoError(t, err)
		t.Cleanup(wpool.Close)
		opts.Store = entrystore.New(wpool)
	}
	if len(opts.Agents) == 0 {
		opts.Agents = []agentsdk.Agent{react.New(react.Options{})}
	}
	plugin, err := adapter.NewPlugin(opts)
	require.NoError(t, err)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	h := &harness{t: t, es: es, org: org, tc: tc, taskQueue: "agentree-test-" + uuid.NewString()[:8], dbURL: dbURL}
	h.ac = aclient.NewClient(tc, es, h.taskQueue)
	if !noWorker {
		w := worker.New(tc, h.taskQueue, worker.Options{})
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
	}
	return h
}

func (h *harness) start(cfg agentsdk.Config, prompt string) entrystore.Execution {
	h.t.Helper()
	if len(cfg.Models) == 0 {
		cfg.Models = []agentsdk.ModelRef{scripted.Model("")}
	}
	ex, err := h.ac.Start(context.Background(), aclient.StartRequest{OrgID: h.org.ID, Kind: react.Kind, Config: cfg, UserPrompt: prompt})
	require.NoError(h.t, err)
	return ex
}

func (h *harness) wait(id string, timeout time.Duration) aclient.Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := h.ac.Wait(ctx, id)
	require.NoError(h.t, err)
	return res
}

// waitStatus polls the execution row until it has status, or fails.
func (h *harness) waitStatus(id string, status entrystore.Status, timeout time.Duration) entrystore.Execution {
	h.t.Helper()
	return h.waitRow(id, timeout, func(ex entrystore.Execution) bool { return ex.Status == status }, "became "+string(status))
}

// waitRow polls the execution row until ok holds for it, or fails saying
// what it never did.
func (h *harness) waitRow(id string, timeout time.Duration, ok func(entrystore.Execution) bool, what string) entrystore.Execution {
	h.t.Helper()
	var ex entrystore.Execution
	require.Eventually(h.t, func() bool {
		var err error
		ex, err = h.es.GetExecution(context.Background(), h.org.ID, id)
		require.NoError(h.t, err)
		return ok(ex)
	}, timeout, 5*time.Millisecond, "execution %s never %s", id, what)
	return ex
}

// path is the active path of the execution's latest checkpoint or leaf.
func (h *harness) path(leafID string) []agentsdk.Message {
	h.t.Helper()
	es, err := h.es.Path(context.Background(), h.org.ID, leafID)
	require.NoError(h.t, err)
	var msgs []agentsdk.Message
	for _, e := range es {
		if e.Type != string(agentsdk.EntryMessage) {
			continue
		}
		var m agentsdk.Message
		require.NoError(h.t, json.Unmarshal(e.Content, &m))
		msgs = append(msgs, m)
	}
	return msgs
}

func roleList(msgs []agentsdk.Message) string {
	var rs []string
	for _, m := range msgs {
		rs = append(rs, string(m.Role))
	}
	return strings.Join(rs, ",")
}

// runStats is one run's history size as the server reports it.
type runStats struct {
	RunID  string
	Events int64
	Bytes  int64
}

// runs walks an execution's continue-as-new chain back from its latest
// run and describes every run.
func (h *harness) runs(id string) []runStats {
	h.t.Helper()
	ctx := context.Background()
	var out []runStats
	runID := ""
	for {
		d, err := h.tc.DescribeWorkflowExecution(ctx, id, runID)
		require.NoError(h.t, err)
		info := d.WorkflowExecutionInfo
		out = append(out, runStats{RunID: info.Execution.RunId, Events: info.HistoryLength, Bytes: info.HistorySizeBytes})
		it := h.tc.GetWorkflowHistory(ctx, id, info.Execution.RunId, false, 0)
		require.True(h.t, it.HasNext())
		first, err := it.Next()
		require.NoError(h.t, err)
		prev := first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if prev == "" {
			return out
		}
		runID = prev
	}
}

// history fetches one run's whole history.
func (h *harness) history(id, runID string) *historypb.History {
	h.t.Helper()
	it := h.tc.GetWorkflowHistory(context.Background(), id, runID, false, 0)
	hist := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(h.t, err)
		hist.Events = append(hist.Events, e)
	}
	return hist
}
