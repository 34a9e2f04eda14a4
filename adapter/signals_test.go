package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// gate is a point a scripted model or tool stops at until the test lets
// it go: reached is closed the first time it is reached.
type gate struct {
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{reached: make(chan struct{}), release: make(chan struct{})} }

// pass marks the gate reached and waits until it is released (or a
// minute, so a failed test cannot wedge its worker).
func (g *gate) pass() {
	g.once.Do(func() { close(g.reached) })
	select {
	case <-g.release:
	case <-time.After(time.Minute):
	}
}

func (g *gate) waitReached(t *testing.T) {
	t.Helper()
	select {
	case <-g.reached:
	case <-time.After(time.Minute):
		t.Fatal("the gate was never reached")
	}
}

// lastUserTexts are the texts of the user messages that end req, joined.
func lastUserTexts(req agentsdk.ModelRequest) string {
	var texts []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == agentsdk.RoleUser; i-- {
		texts = append([]string{req.Messages[i].Text()}, texts...)
	}
	return strings.Join(texts, "+")
}

// TestAcknowledgedMessageIsNeverDropped races a user message against the
// final answer of a one-shot execution: the model's answer is held until
// the message is acknowledged, so the message arrives while the execution
// is about to complete. It must be answered, not dropped — whether its
// Temporal signal arrives during the segment or (a gateway that died
// after storing it) never does.
func TestAcknowledgedMessageIsNeverDropped(t *testing.T) {
	for _, c := range []struct {
		name string
		send func(h *harness, exID string) string
	}{
		{"signalled", func(h *harness, exID string) string {
			s, err := h.ac.Signal(context.Background(), h.org.ID, exID, agentsdk.SignalUserMessage, []byte(`{"text":"m2"}`))
			require.NoError(h.t, err)
			return s.ID
		}},
		{"stored but never signalled", func(h *harness, exID string) string {
			s, err := h.es.PutSignal(context.Background(), entrystore.Signal{OrgID: h.org.ID, ExecutionID: exID,
				Name: agentsdk.SignalUserMessage, Value: []byte(`{"text":"m2"}`)})
			require.NoError(h.t, err)
			return s.ID
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			final := newGate()
			model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
				if turn == 0 {
					final.pass()
				}
				return scripted.Turn{Text: "answer to " + lastUserTexts(req)}
			})
			h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, ReconcileInterval: -1}, false)
			ex := h.start(agentsdk.Config{}, "m1")
			final.waitReached(t)
			sigID := c.send(h, ex.ID)
			close(final.release)

			res := h.wait(ex.ID, time.Minute)
			require.Equal(t, "COMPLETED", res.Status)
			require.Equal(t, "answer to m2", res.Text, "the acknowledged message was answered")
			var texts []string
			for _, m := range h.path(res.LeafID) {
				texts = append(texts, m.Text())
			}
			require.Equal(t, []string{"m1", "answer to m1", "m2", "answer to m2"}, texts)
			sg, err := h.es.GetSignal(context.Background(), h.org.ID, sigID)
			require.NoError(t, err)
			require.True(t, sg.Consumed)
		})
	}
}

// TestConsumedSignalRedeliveryIsIgnored delivers a consumed user message's
// signal again after a continue-as-new (RunEvents 1 continues as new at
// every checkpoint, so the run that gets it again has never seen it). The
// tree must not fork, the message must not be answered twice and no tool
// call may be recorded twice.
func TestConsumedSignalRedeliveryIsIgnored(t *testing.T) {
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentsdk.RoleUser {
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{echoCall(fmt.Sprintf("call-%d", turn), last.Text())}}
		}
		return scripted.Turn{Text: "answer: " + last.Text()}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, RunEvents: 1, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Tools: []string{"echo"}}, "m1")
	answered := func(text string) {
		t.Helper()
		require.Eventually(t, func() bool {
			row, err := h.es.GetExecution(context.Background(), h.org.ID, ex.ID)
			require.NoError(t, err)
			cp, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, ex.ID)
			if err != nil || row.Status != entrystore.StatusWaiting {
				return false
			}
			msgs := h.path(cp.LeafEntryID)
			return msgs[len(msgs)-1].Text() == "answer: echo: "+text
		}, time.Minute, 10*time.Millisecond, "%s was never answered", text)
	}
	answered("m1")
	s2, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"m2"}`))
	require.NoError(t, err)
	answered("m2")

	// The same signal again, as a retrying gateway or reconciler would
	// send it, to a run continued as new since it was consumed; then a new
	// message, which the workflow receives after it.
	require.NoError(t, h.tc.SignalWorkflow(context.Background(), ex.ID, "", client.SignalName,
		agentsdk.Signal{ID: s2.ID, Name: agentsdk.SignalUserMessage}))
	_, err = h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"m3"}`))
	require.NoError(t, err)
	answered("m3")
	require.Greater(t, len(h.runs(ex.ID)), 3, "the execution continued as new between deliveries")

	entries, _, err := h.es.ListEntries(context.Background(), h.org.ID, ex.ID, entrystore.Page{Limit: 500})
	require.NoError(t, err)
	children := map[string]int{}
	var users, answers []string
	for _, e := range entries {
		children[e.ParentID]++
		require.LessOrEqual(t, children[e.ParentID], 1, "entry %s has two children: the tree forked", e.ParentID)
		if e.Type != string(agentsdk.EntryMessage) {
			continue
		}
		var m agentsdk.Message
		require.NoError(t, json.Unmarshal(e.Content, &m))
		switch {
		case m.Role == agentsdk.RoleUser:
			users = append(users, m.Text())
		case m.Role == agentsdk.RoleAssistant && m.Text() != "":
			answers = append(answers, m.Text())
		}
	}
	require.Equal(t, []string{"m1", "m2", "m3"}, users)
	require.Equal(t, []string{"answer: echo: m1", "answer: echo: m2", "answer: echo: m3"}, answers)
	calls, _, err := h.es.ListToolCalls(context.Background(), h.org.ID, ex.ID, entrystore.ToolCallFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, calls, 3, "one tool call per message")
	require.Equal(t, 6, model.Calls(), "two model calls per message, none repeated")
}
