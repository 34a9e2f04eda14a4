package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/internal/temporaltest"
)

// bestOfModel answers "message N" (N > 1) with a new numbered answer each time
// (so each branch's differs) and anything else as recordingModel does,
// keeping every request.
type bestOfModel struct {
	recordingModel
	n atomic.Int32
}

func (m *bestOfModel) provider() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		if strings.Contains(req.System, "abandoned") {
			return scripted.Turn{Text: "SUMMARY of the branch"}
		}
		if last.Role == agentsdk.RoleUser && strings.HasPrefix(last.Text(), "message ") && last.Text() != "message 1" {
			return scripted.Turn{Text: fmt.Sprintf("answer %d to %s", m.n.Add(1), last.Text())}
		}
		return scripted.Turn{Text: "answer to " + last.Text()}
	})
}

// TestBestOfNPromotesOne: ten branches from a WAITING multi-turn
// execution's second user message all answer it; the comparison lists the
// ten with their answers, steps and cost; promoting one makes its answer
// the execution's, and the next user message continues from it; the rest
// are marked not promoted; every workflow run stays small.
func TestBestOfNPromotesOne(t *testing.T) {
	m := &bestOfModel{}
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{m.provider()}, tools: []*agentsdk.Tool{echoTool()}})
	c := startConversation(t, e, "message 1")
	c.say("message 2")
	u2 := c.entry("message 2")
	original := c.entry("answer 1 to message 2")

	// Bad input first: n out of range, an unknown entry, another org.
	e.fails(e.keyA, http.MethodPost, c.path+"/best-of", map[string]any{"entryId": u2, "n": 1}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, c.path+"/best-of", map[string]any{"entryId": u2, "n": 11}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, c.path+"/best-of", map[string]any{"entryId": "00000000-0000-0000-0000-000000000000", "n": 2}, http.StatusNotFound, "not_found")
	other := startConversation(t, e, "another execution")
	e.fails(e.keyA, http.MethodPost, c.path+"/best-of", map[string]any{"entryId": other.entry("another execution"), "n": 2}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, strings.Replace(c.path, e.orgA.Slug, e.orgB.Slug, 1)+"/best-of", map[string]any{"entryId": u2, "n": 2}, http.StatusNotFound, "not_found")
	// After an answer the branches need a message to answer.
	e.fails(e.keyA, http.MethodPost, c.path+"/best-of", map[string]any{"entryId": original, "n": 2}, http.StatusBadRequest, "invalid_argument")

	b := e.ok(e.keyA, http.MethodPost, c.path+"/best-of", map[string]any{"entryId": u2})
	id := b["id"].(string)
	require.Equal(t, u2, b["entryId"])
	require.Len(t, b["branches"], 10, "n defaults to the operator's maximum")
	e.fails(e.keyB, http.MethodGet, strings.Replace(c.path, e.orgA.Slug, e.orgB.Slug, 1)+"/best-of/"+id, nil, http.StatusNotFound, "not_found")

	var cmp map[string]any
	poll(t, 2*time.Minute, func() bool {
		cmp = e.ok(e.keyA, http.MethodGet, c.path+"/best-of/"+id, nil)
		for _, br := range cmp["branches"].([]any) {
			p := br.(map[string]any)["path"].(map[string]any)
			if p["status"] != "WAITING" || len(asSlice(p["answers"])) != 1 {
				return false
			}
		}
		return true
	}, "the ten branches never all answered")
	branches := cmp["branches"].([]any)
	require.Len(t, branches, 10)
	answers := map[string]string{}
	for _, br := range branches {
		p := br.(map[string]any)["path"].(map[string]any)
		a := p["answers"].([]any)[0].(string)
		require.Regexp(t, `^answer \d+ to message 2$`, a)
		require.NotEqual(t, "answer 1 to message 2", a, "each branch answered again")
		require.EqualValues(t, 1, p["steps"])
		require.Contains(t, p, "cost")
		require.Equal(t, false, br.(map[string]any)["promoted"])
		answers[p["executionId"].(string)] = a
	}
	require.Len(t, answers, 10, "ten branches, ten executions")
	distinct := map[string]bool{}
	for _, a := range answers {
		distinct[a] = true
	}
	require.Len(t, distinct, 10, "ten different answers")

	keep := branches[6].(map[string]any)["path"].(map[string]any)["executionId"].(string)
	promoted := e.ok(e.keyA, http.MethodPost, c.path+"/best-of/"+id+"/promote", map[string]any{"branchId": keep})
	require.Equal(t, keep, promoted["promotedId"])
	leaf := promoted["promotedLeafId"].(string)
	require.NotEmpty(t, leaf)
	for _, br := range promoted["branches"].([]any) {
		b := br.(map[string]any)
		require.Equal(t, b["path"].(map[string]any)["executionId"] == keep, b["promoted"], "only the kept branch is promoted")
	}
	require.Equal(t, leaf, e.ok(e.keyA, http.MethodGet, c.path, nil)["leafEntryId"], "the kept path's end is the execution's leaf")
	// Promoting the same again answers the same; another is a conflict.
	again := e.ok(e.keyA, http.MethodPost, c.path+"/best-of/"+id+"/promote", map[string]any{"branchId": keep})
	require.Equal(t, leaf, again["promotedLeafId"])
	e.fails(e.keyA, http.MethodPost, c.path+"/best-of/"+id+"/promote", map[string]any{"branchId": branches[0].(map[string]any)["path"].(map[string]any)["executionId"]}, http.StatusConflict, "conflict")
	e.fails(e.keyA, http.MethodPost, c.path+"/best-of/"+id+"/promote", map[string]any{"branchId": other.path[strings.LastIndex(other.path, "/")+1:]}, http.StatusNotFound, "not_found")

	c.say("message 3")
	require.Equal(t, []string{"message 1", "answer to message 1", "message 2", answers[keep], "message 3"}, m.texts(),
		"the next message continues from the promoted answer")
	msgs := items(t, e.ok(e.keyA, http.MethodGet, c.path+"/messages?pageSize=500", nil), "messages")
	require.Len(t, msgs, 6)

	// With summarize, the branches not kept get branch_summary entries
	// under the entry (beside the kept path, not in its context).
	u3 := c.entry("message 3")
	b2 := e.ok(e.keyA, http.MethodPost, c.path+"/best-of", map[string]any{"entryId": u3, "n": 2})
	id2 := b2["id"].(string)
	poll(t, time.Minute, func() bool {
		// A branch is promoted once it answered and waits (its answer is
		// written before its checkpoint and its wait).
		for _, br := range e.ok(e.keyA, http.MethodGet, c.path+"/best-of/"+id2, nil)["branches"].([]any) {
			p := br.(map[string]any)["path"].(map[string]any)
			if p["status"] != "WAITING" || len(asSlice(p["answers"])) != 1 {
				return false
			}
		}
		return true
	}, "the two branches never answered")
	two := e.ok(e.keyA, http.MethodGet, c.path+"/best-of/"+id2, nil)["branches"].([]any)
	keep2 := two[1].(map[string]any)["path"].(map[string]any)
	p2 := e.ok(e.keyA, http.MethodPost, c.path+"/best-of/"+id2+"/promote", map[string]any{"branchId": keep2["executionId"], "summarize": true})
	dropped := p2["branches"].([]any)[0].(map[string]any)
	require.Equal(t, false, dropped["promoted"])
	sum := dropped["summaryEntryId"].(string)
	require.NotEmpty(t, sum)
	require.Empty(t, p2["branches"].([]any)[1].(map[string]any)["summaryEntryId"], "the kept branch is not summarised")
	byID := map[string]map[string]any{}
	for _, en := range e.all(c.path+"/entries?pageSize=500", "entries") {
		byID[en["id"].(string)] = en
	}
	summary := byID[sum]
	require.NotNil(t, summary)
	require.Equal(t, "branch_summary", summary["type"])
	call := byID[summary["parentId"].(string)]
	require.Equal(t, "llm_call", call["type"], "the summary's model call is recorded")
	require.Equal(t, u3, call["parentId"], "under the entry the branches started from")
	require.Equal(t, p2["promotedLeafId"], e.ok(e.keyA, http.MethodGet, c.path, nil)["leafEntryId"], "the leaf is the kept path's end, not the summary")
	c.say("message 4")
	got := m.texts()
	require.Equal(t, []string{"message 3", keep2["answers"].([]any)[0].(string), "message 4"}, got[len(got)-3:])
	for _, bid := range []string{two[0].(map[string]any)["path"].(map[string]any)["executionId"].(string), keep2["executionId"].(string)} {
		answers[bid] = ""
	}

	// Every run of the execution and of its branches stays small.
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	ids := []string{c.path[strings.LastIndex(c.path, "/")+1:]}
	for bid := range answers {
		ids = append(ids, bid)
	}
	for _, wid := range ids {
		for _, r := range workflowRuns(t, tc, wid) {
			require.LessOrEqual(t, r.events, int64(100), "workflow %s run %s", wid, r.runID)
			require.LessOrEqual(t, r.bytes, int64(64<<10), "workflow %s run %s", wid, r.runID)
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

type workflowRun struct {
	runID         string
	events, bytes int64
}

// workflowRuns are the runs of workflow id, newest first, with their
// history's length and size (as adapter's TestHistoryStaysSmall reads
// them: Describe each, following continued-as-new back to the first).
func workflowRuns(t *testing.T, tc client.Client, id string) []workflowRun {
	t.Helper()
	ctx := context.Background()
	var out []workflowRun
	runID := ""
	for {
		d, err := tc.DescribeWorkflowExecution(ctx, id, runID)
		require.NoError(t, err)
		info := d.WorkflowExecutionInfo
		out = append(out, workflowRun{runID: info.Execution.RunId, events: info.HistoryLength, bytes: info.HistorySizeBytes})
		it := tc.GetWorkflowHistory(ctx, id, info.Execution.RunId, false, 0)
		require.True(t, it.HasNext())
		first, err := it.Next()
		require.NoError(t, err)
		prev := first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if prev == "" {
			return out
		}
		runID = prev
	}
}
