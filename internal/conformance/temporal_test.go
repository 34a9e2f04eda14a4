package conformance_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/conformance"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
)

// failFirstAssistant makes the first insert of an assistant entry in the
// test's schema fail as a lost connection (SQLSTATE 08006): the
// store's "not now", which the plugin retries. A sequence counts, as it
// is not rolled back with the failed insert.
const failFirstAssistant = `
CREATE SEQUENCE conformance_fault;
CREATE FUNCTION conformance_fault() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	-- Nested: SQL does not promise to skip nextval when the role differs.
	IF NEW.role = 'assistant' THEN
		IF nextval('conformance_fault') = 1 THEN
			RAISE EXCEPTION 'injected: store not reachable now' USING ERRCODE = '08006';
		END IF;
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER conformance_fault BEFORE INSERT ON agent_entry FOR EACH ROW EXECUTE FUNCTION conformance_fault();`

// runTemporal plays a scenario on the Temporal plugin: a real dev server,
// Postgres, a worker in this process.
func runTemporal(t *testing.T, sc conformance.Scenario) conformance.Record {
	t.Helper()
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	pool, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	if sc.StoreErrorOnce {
		_, err := pool.Exec(ctx, failFirstAssistant)
		require.NoError(t, err)
	}
	es := entrystore.New(pool)
	org, err := es.CreateOrg(ctx, "conf-"+uuid.NewString()[:8], "conformance")
	require.NoError(t, err)
	if sc.BudgetCalls > 0 {
		_, err := es.SetQuota(ctx, entrystore.Quota{OrgID: org.ID, TokensPerDay: sc.BudgetTokens()})
		require.NoError(t, err)
	}

	var ac *aclient.Client
	var execID string
	hooks := conformance.Hooks{
		BlockStarted: func() {
			_, err := ac.Cancel(ctx, org.ID, execID)
			require.NoError(t, err)
		},
		Steer: func(text string) {
			v, _ := json.Marshal(agentsdk.UserMessage{Text: text})
			_, err := ac.Signal(ctx, org.ID, execID, agentsdk.SignalUserMessage, v)
			require.NoError(t, err)
		},
	}
	primary, backup := sc.Models()
	plugin, err := adapter.NewPlugin(adapter.Options{
		Store: es, Agents: conformance.Agents(), Providers: []agentsdk.Provider{primary, backup},
		Tools: conformance.Tools(hooks, func() string { return sc.Steer }), ModelAttempts: sc.ModelAttempts,
		ReconcileInterval: -1, CapabilityInterval: time.Hour,
	})
	require.NoError(t, err)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := "conformance-" + uuid.NewString()[:8]
	w := worker.New(tc, queue, worker.Options{})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	ac = aclient.NewClient(tc, es, queue)

	execID = uuid.NewString()
	ex, err := ac.Start(ctx, aclient.StartRequest{ExecutionID: execID, OrgID: org.ID, Kind: sc.AgentOf().Kind(), Config: sc.ConfigOf(), UserPrompt: sc.Prompt})
	require.NoError(t, err)

	waits := 1
	settle := func() {
		require.Eventually(t, func() bool { return settled(t, es, org.ID, ex.ID, waits) }, time.Minute, 10*time.Millisecond,
			"execution %s did not wait (%d times) or end", ex.ID, waits)
	}
	settle()
	for _, f := range sc.FollowUps {
		v, _ := json.Marshal(f.Value)
		_, err := ac.Signal(ctx, org.ID, ex.ID, f.Name, v)
		require.NoError(t, err)
		if !f.Ignored {
			waits++
			settle()
		}
	}

	final, err := es.GetExecution(ctx, org.ID, ex.ID)
	require.NoError(t, err)
	return record(t, es, org.ID, ex.ID, string(final.Status))
}

// settled reports whether the execution ended (its terminal event
// published) or published its nth agent.waiting.
func settled(t *testing.T, es *entrystore.Store, org, id string, n int) bool {
	evs, err := es.StreamEventsAfter(context.Background(), org, id, 0, 10000)
	require.NoError(t, err)
	waiting := 0
	for _, e := range evs {
		if event.Terminal(e.Event) {
			return true
		}
		if e.Event == event.NameWaiting {
			waiting++
		}
	}
	return waiting >= n
}

func record(t *testing.T, es *entrystore.Store, org, id, status string) conformance.Record {
	ctx := context.Background()
	var entries []conformance.Entry
	page := entrystore.Page{Limit: 1000}
	got, _, err := es.ListEntries(ctx, org, id, page)
	require.NoError(t, err)
	for _, e := range got {
		entries = append(entries, conformance.Entry{ID: e.ID, ParentID: e.ParentID, Type: e.Type, Role: e.Role,
			TurnID: e.TurnID, Key: e.IdempotencyKey, Content: e.Content, Metadata: e.Metadata})
	}
	tcs, _, err := es.ListToolCalls(ctx, org, id, entrystore.ToolCallFilter{}, page)
	require.NoError(t, err)
	var calls []conformance.ToolCall
	for _, c := range tcs {
		calls = append(calls, conformance.ToolCall{MessageID: c.MessageID, ResultEntryID: c.ResultEntryID, ToolCallID: c.ToolCallID,
			ToolName: c.ToolName, Status: c.Status, Input: c.Input, Output: c.Output, OutputSHA256: c.OutputSHA256,
			OutputSize: c.OutputSize, Truncated: c.Truncated, StepNumber: c.StepNumber})
	}
	cps, _, err := es.ListCheckpoints(ctx, org, id, page)
	require.NoError(t, err)
	evs, err := es.StreamEventsAfter(ctx, org, id, 0, 10000)
	require.NoError(t, err)
	var out []conformance.Event
	for _, e := range evs {
		out = append(out, conformance.Event{Name: e.Event, Data: e.Data})
	}
	return conformance.Normalize(id, status, entries, calls, cps, out)
}
