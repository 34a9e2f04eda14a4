package agenttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/event"
)

// quoteAgent is a tiny custom agent: it prices the user's request with
// the "quote" task, streams the quote, and waits for an "approve" or
// "reject" signal; on approval it books the job with the "book" task.
type quoteAgent struct{}

type (
	quoteInput  struct{ Request string }
	quoteOutput struct{ Cents int }
	bookInput   struct {
		Cents int
		By    string
	}
	bookOutput struct{ Ref string }
	approval   struct{ By string }
	quoteState struct {
		Cents int `json:"cents"`
	}
)

const (
	signalApprove = "approve"
	signalReject  = "reject"
)

func (quoteAgent) Kind() string { return "quote-agent" }

func (quoteAgent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	var st quoteState
	if err := ctx.State().GetCustom(&st); err != nil {
		return agentsdk.Outcome{}, err
	}
	if st.Cents == 0 {
		return quote(ctx)
	}
	for _, s := range ctx.Signals() {
		switch s.Name {
		case signalApprove:
			return book(ctx, s, st)
		case signalReject:
			msg := agentsdk.TextMessage(agentsdk.RoleUser, "rejected")
			if _, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
				return agentsdk.Outcome{}, err
			}
			return agentsdk.Fail("quote rejected"), nil
		}
	}
	// Woken by a signal it does not wait for: wait on.
	return agentsdk.Wait("approval", signalApprove, signalReject), nil
}

func quote(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	var q quoteOutput
	if err := ctx.RunActivity("quote", quoteInput{Request: ctx.Leaf().Preview}, &q); err != nil {
		return agentsdk.Outcome{}, err
	}
	if err := ctx.StreamData(map[string]any{"quoteCents": q.Cents}); err != nil {
		return agentsdk.Outcome{}, err
	}
	msg := agentsdk.TextMessage(agentsdk.RoleAssistant, fmt.Sprintf("That will be %d cents. Approve?", q.Cents))
	if _, err := ctx.Append(agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
		return agentsdk.Outcome{}, err
	}
	if err := ctx.State().SetCustom(quoteState{Cents: q.Cents}); err != nil {
		return agentsdk.Outcome{}, err
	}
	return agentsdk.Wait("approval", signalApprove, signalReject), nil
}

func book(ctx agentsdk.Context, s agentsdk.Signal, st quoteState) (agentsdk.Outcome, error) {
	var a approval
	if err := ctx.SignalValue(s, &a); err != nil {
		return agentsdk.Outcome{}, err
	}
	msg := agentsdk.TextMessage(agentsdk.RoleUser, "approved by "+a.By)
	if _, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
		return agentsdk.Outcome{}, err
	}
	var b bookOutput
	if err := ctx.RunActivity("book", bookInput{Cents: st.Cents, By: a.By}, &b); err != nil {
		return agentsdk.Outcome{}, err
	}
	if err := ctx.StreamData(map[string]any{"booked": b.Ref}); err != nil {
		return agentsdk.Outcome{}, err
	}
	return agentsdk.Complete("booked " + b.Ref), nil
}

// tasks are the quote agent's tasks; booked records what "book" was asked.
func activities(booked *[]bookInput) map[string]func(context.Context, json.RawMessage) (any, error) {
	return map[string]func(context.Context, json.RawMessage) (any, error){
		"quote": func(_ context.Context, in json.RawMessage) (any, error) {
			var q quoteInput
			if err := json.Unmarshal(in, &q); err != nil {
				return nil, err
			}
			return quoteOutput{Cents: 100 * len(q.Request)}, nil
		},
		"book": func(_ context.Context, in json.RawMessage) (any, error) {
			var b bookInput
			if err := json.Unmarshal(in, &b); err != nil {
				return nil, err
			}
			*booked = append(*booked, b)
			return bookOutput{Ref: fmt.Sprintf("job-%d", len(*booked))}, nil
		},
	}
}

func startQuote(t *testing.T, booked *[]bookInput) *agenttest.Execution {
	t.Helper()
	x, err := agenttest.Start(agenttest.Options{Agent: quoteAgent{}, Activities: activities(booked), UserPrompt: "paint"})
	require.NoError(t, err)
	return x
}

func texts(t *testing.T, x *agenttest.Execution) []string {
	t.Helper()
	msgs, err := x.Messages()
	require.NoError(t, err)
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Text())
	}
	return out
}

func dataEvents(t *testing.T, x *agenttest.Execution) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range x.Store.Events() {
		if e.Name != event.NameData {
			continue
		}
		var d event.Data
		require.NoError(t, json.Unmarshal(e.Data, &d))
		require.Equal(t, event.TypeCustom, d.Data.Type)
		var v map[string]any
		require.NoError(t, json.Unmarshal(d.Data.Value, &v))
		out = append(out, v)
	}
	return out
}

func TestCustomAgentWaitsForApprovalThenBooks(t *testing.T) {
	var booked []bookInput
	x := startQuote(t, &booked)
	ctx := context.Background()

	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	require.Equal(t, "approval", x.Reason)
	require.Equal(t, []string{"user: paint", "assistant: That will be 500 cents. Approve?"}, texts(t, x))
	require.Equal(t, []map[string]any{{"quoteCents": 500.0}}, dataEvents(t, x))
	require.Len(t, x.Checkpoints, 1)
	require.Empty(t, booked)

	// A signal it does not wait for leaves it waiting: no segment runs
	// (as in the Temporal runtime, whose wait ends only on a signal named
	// in the outcome).
	require.NoError(t, x.Signal("ping", nil))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	require.Equal(t, 1, x.Segments)

	require.NoError(t, x.Signal(signalApprove, approval{By: "ana"}))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusCompleted, x.Status)
	require.Equal(t, "booked job-1", x.Reason)
	require.Equal(t, []bookInput{{Cents: 500, By: "ana"}}, booked)
	require.Equal(t, []string{"user: paint", "assistant: That will be 500 cents. Approve?", "user: approved by ana"}, texts(t, x))
	require.Equal(t, []map[string]any{{"quoteCents": 500.0}, {"booked": "job-1"}}, dataEvents(t, x))
	require.Equal(t, 2, x.Segments)

	var st quoteState
	state := x.State()
	require.NoError(t, state.GetCustom(&st))
	require.Equal(t, quoteState{Cents: 500}, st)
}

func TestCustomAgentApprovedBeforeItRunsDoesNotWait(t *testing.T) {
	var booked []bookInput
	x := startQuote(t, &booked)
	require.NoError(t, x.Signal(signalApprove, approval{By: "bo"}))

	require.NoError(t, x.Run(context.Background()))

	require.Equal(t, agenttest.StatusCompleted, x.Status, "the pending approval ends the wait at once")
	require.Equal(t, []bookInput{{Cents: 500, By: "bo"}}, booked)
	require.Equal(t, 2, x.Segments)
}

func TestCustomAgentRejected(t *testing.T) {
	var booked []bookInput
	x := startQuote(t, &booked)
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	require.NoError(t, x.Signal(signalReject, nil))
	require.NoError(t, x.Run(ctx))

	require.Equal(t, agenttest.StatusFailed, x.Status)
	require.Equal(t, "quote rejected", x.Reason)
	require.Empty(t, booked)
	require.Equal(t, "user: rejected", texts(t, x)[2])
}

func TestCustomAgentTaskFailureFailsTheExecution(t *testing.T) {
	boom := errors.New("pricing service down")
	x, err := agenttest.Start(agenttest.Options{Agent: quoteAgent{}, UserPrompt: "paint",
		Activities: map[string]func(context.Context, json.RawMessage) (any, error){
			"quote": func(context.Context, json.RawMessage) (any, error) { return nil, boom },
		}})
	require.NoError(t, err)
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusFailed, x.Status)
	require.Equal(t, boom.Error(), x.Reason)

	x, err = agenttest.Start(agenttest.Options{Agent: quoteAgent{}, UserPrompt: "paint"})
	require.NoError(t, err)
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusFailed, x.Status)
	require.Contains(t, x.Reason, `unknown activity "quote"`)
}
