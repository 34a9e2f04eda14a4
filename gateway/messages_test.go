package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// conversation appends entries to an execution the way the agent does:
// messages (each model answer after an llm_call record) in a chain.
type conversation struct {
	t  *testing.T
	e  *env
	ex entrystore.Execution
	n  int
}

func (c *conversation) add(parent string, role agentsdk.Role, typ agentsdk.EntryType) entrystore.Entry {
	c.t.Helper()
	c.n++
	content := []byte(`{}`)
	if typ == agentsdk.EntryMessage {
		content, _ = json.Marshal(agentsdk.TextMessage(role, fmt.Sprintf("message %d", c.n)))
	}
	en, _, err := c.e.es.AppendEntry(context.Background(), entrystore.Entry{
		OrgID: c.ex.OrgID, ExecutionID: c.ex.ID, ParentID: parent, Type: string(typ), Role: string(role),
		Content: content, IdempotencyKey: fmt.Sprintf("k%d", c.n),
	})
	require.NoError(c.t, err)
	return en
}

// page reads one page of messages over REST.
func (c *conversation) page(size int, cursor string) (ids []string, steps []float64, leaf, next string) {
	c.t.Helper()
	body := c.e.ok(c.e.keyA, http.MethodGet, fmt.Sprintf("%s/messages?pageSize=%d&cursor=%s",
		c.e.execPath(c.e.orgA, c.ex.ID), size, url.QueryEscape(cursor)), nil)
	for _, m := range items(c.t, body, "messages") {
		ids = append(ids, m["entryId"].(string))
		steps = append(steps, m["stepNumber"].(float64))
	}
	return ids, steps, body["leafEntryId"].(string), body["nextCursor"].(string)
}

// TestMessagesPageALongConversation pages a 500-message conversation over
// REST: every message once, in path order, with its step; cursors stay on
// the path they started on while the agent appends, and a repeated cursor
// gives the same page; a fork moves the active path.
func TestMessagesPageALongConversation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOptions{noTemporal: true})
	ex, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(t, err)
	c := &conversation{t: t, e: e, ex: ex}

	// Before any entry: an empty page on no leaf.
	ids, _, leaf, next := c.page(10, "")
	require.Empty(t, ids)
	require.Empty(t, leaf)
	require.Empty(t, next)

	// 250 exchanges: a user message, an llm_call record, the answer.
	var want []string
	var wantSteps []float64
	parent := ""
	for i := range 250 {
		u := c.add(parent, agentsdk.RoleUser, agentsdk.EntryMessage)
		call := c.add(u.ID, "", agentsdk.EntryLLMCall)
		a := c.add(call.ID, agentsdk.RoleAssistant, agentsdk.EntryMessage)
		want = append(want, u.ID, a.ID)
		wantSteps = append(wantSteps, float64(i), float64(i+1))
		parent = a.ID
	}
	require.Len(t, want, 500)

	var got []string
	var gotSteps []float64
	cursor, pages := "", 0
	for {
		ids, steps, leaf, next := c.page(7, cursor)
		require.Equal(t, parent, leaf, "every page is of the path the first one pinned")
		again, _, _, againNext := c.page(7, cursor)
		require.Equal(t, ids, again, "a cursor always gives the same page")
		require.Equal(t, next, againNext)
		got, gotSteps = append(got, ids...), append(gotSteps, steps...)
		pages++
		if pages == 3 {
			// The agent goes on while the client pages: the pinned path
			// does not change.
			c.add(parent, agentsdk.RoleUser, agentsdk.EntryMessage)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	require.Equal(t, want, got)
	require.Equal(t, wantSteps, gotSteps)
	require.Equal(t, 72, pages) // ceil(500/7)

	// The newest append is the active leaf; a fork under message 100 (an
	// edit, a regenerated answer) moves the active path onto it.
	ids, _, _, next = c.page(500, "")
	require.Equal(t, want, ids, "a page holds at most 500")
	ids, _, _, next = c.page(500, next)
	require.Len(t, ids, 1, "the message the agent appended while the client paged")
	require.Empty(t, next)
	fork := c.add(want[99], agentsdk.RoleUser, agentsdk.EntryMessage)
	ids, steps, leaf, next := c.page(500, "")
	require.Equal(t, fork.ID, leaf)
	require.Empty(t, next)
	require.Equal(t, append(append([]string{}, want[:100]...), fork.ID), ids)
	require.Equal(t, wantSteps[99], steps[100], "a user message keeps the step before it")

	// Bad cursors are the client's error.
	for _, bad := range []string{"x", "eyJsIjoiIiwiZCI6MH0", "eyJsIjoiNWIwZDdkOGUtN2M0My00YzQ5LTlkMGYtMmI2ZDFiOGYwYTExIiwiZCI6MH0"} {
		e.fails(e.keyA, http.MethodGet, e.execPath(e.orgA, ex.ID)+"/messages?cursor="+bad, nil, http.StatusBadRequest, "invalid_argument")
	}
	// A cursor of another execution's path is refused, not followed.
	other, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(t, err)
	_, _, _, next = c.page(2, "")
	require.NotEmpty(t, next)
	e.fails(e.keyA, http.MethodGet, e.execPath(e.orgA, other.ID)+"/messages?cursor="+next, nil, http.StatusBadRequest, "invalid_argument")
}

// TestLatestCheckpoint reads the newest checkpoint a page reload resumes
// from: 404 {code, message} before the first, then always the newest.
func TestLatestCheckpoint(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOptions{noTemporal: true})
	ex, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(t, err)
	path := e.execPath(e.orgA, ex.ID) + "/checkpoints"

	r := e.fails(e.keyA, http.MethodGet, path+"/latest", nil, http.StatusNotFound, "not_found")
	require.Contains(t, r.Body["message"], "no checkpoint")
	c := &conversation{t: t, e: e, ex: ex}
	root := c.add("", agentsdk.RoleUser, agentsdk.EntryMessage)
	for seq := 1; seq <= 3; seq++ {
		_, err := e.es.AppendCheckpoint(ctx, entrystore.Checkpoint{
			OrgID: e.orgA.ID, ExecutionID: ex.ID, Sequence: seq, LeafEntryID: root.ID,
			State: json.RawMessage(fmt.Sprintf(`{"turnIndex": %d}`, seq)),
		})
		require.NoError(t, err)
		latest := e.ok(e.keyA, http.MethodGet, path+"/latest", nil)
		require.Equal(t, float64(seq), latest["sequence"])
		require.Equal(t, map[string]any{"turnIndex": float64(seq)}, latest["state"])
		require.Equal(t, root.ID, latest["leafEntryId"])
		require.Equal(t, latest, e.ok(e.keyA, http.MethodGet, fmt.Sprintf("%s/%d", path, seq), nil))
	}

	// Another organization's execution, an unknown one and a sequence that
	// is not a number are the client's errors, in its terms.
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+ex.ID+"/checkpoints/latest", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, e.execPath(e.orgA, "5b0d7d8e-7c43-4c49-9d0f-2b6d1b8f0a11")+"/checkpoints/latest", nil, http.StatusNotFound, "not_found")
	r = e.fails(e.keyA, http.MethodGet, path+"/newest", nil, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "sequence")
}
