package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
)

// testPageBytes is the byte budget TestResponsePagesHaveAByteBudget gives
// the gateway: a few of its 20 KiB rows per page.
const testPageBytes = 64 << 10

// pagesOf follows path's nextCursor from the first page to the last,
// asking for the most rows a page may hold, and returns each page's items
// of field and its JSON body's length.
func (e *env) pagesOf(t testing.TB, path, field string) (pages [][]map[string]any, sizes []int) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for cursor := ""; ; {
		r := e.do(e.keyA, http.MethodGet, path+sep+"pageSize=500&cursor="+url.QueryEscape(cursor), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Raw)
		pages, sizes = append(pages, items(t, r.Body, field)), append(sizes, len(r.Raw))
		require.Less(t, len(pages), 200, "%s never ends", path)
		if cursor = r.Body["nextCursor"].(string); cursor == "" {
			return pages, sizes
		}
	}
}

// requireBudgeted checks that pages hold want's items once each, in order,
// that no page of more than one item is much over the budget (its JSON is
// measured; the budget counts stored or protobuf bytes), that the budget,
// not the row limit, ended them, and that big comes alone.
func requireBudgeted(t *testing.T, what string, pages [][]map[string]any, sizes []int, key string, want []string, big string) {
	t.Helper()
	var got []string
	alone := false
	for i, p := range pages {
		if len(p) > 1 {
			require.LessOrEqual(t, sizes[i], testPageBytes*5/4, "%s: page %d holds %d items in %d bytes", what, i, len(p), sizes[i])
		}
		for _, it := range p {
			got = append(got, it[key].(string))
			if it[key] == big {
				alone = len(p) == 1
			}
		}
	}
	require.Equal(t, want, got, "%s: every item once, in order", what)
	require.Greater(t, len(pages), len(want)/8, "%s: %d items in %d pages: the budget ended them", what, len(want), len(pages))
	if big != "" {
		require.True(t, alone, "%s: the item over the budget comes alone", what)
	}
}

// TestResponsePagesHaveAByteBudget: with 20 KiB rows and a 64 KiB budget,
// the lists of conversation data (entries, messages, checkpoints,
// executions), an entry's context and the token timeline all end their
// pages at the budget rather than at pageSize=500, with a nextCursor that
// goes on where they stopped, every row once; a row larger than the whole
// budget comes alone on its page, whole.
func TestResponsePagesHaveAByteBudget(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOptions{noTemporal: true, gateway: func(o *gateway.Options) { o.PageBytes = testPageBytes }})
	text := strings.Repeat("x", 20<<10)
	ex, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(t, err)

	// 30 messages of 20 KiB, the 11th of 200 KiB, in one chain.
	var ids []string
	var bigID string
	parent := ""
	for i := range 30 {
		body := text
		if i == 10 {
			body = strings.Repeat("y", 200<<10)
		}
		role := []agentsdk.Role{agentsdk.RoleUser, agentsdk.RoleAssistant}[i%2]
		content, err := json.Marshal(agentsdk.TextMessage(role, body))
		require.NoError(t, err)
		en, _, err := e.es.AppendEntry(ctx, entrystore.Entry{
			OrgID: ex.OrgID, ExecutionID: ex.ID, ParentID: parent, Type: string(agentsdk.EntryMessage), Role: string(role),
			Content: content, IdempotencyKey: fmt.Sprintf("k%d", i),
		})
		require.NoError(t, err)
		ids, parent = append(ids, en.ID), en.ID
		if i == 10 {
			bigID = en.ID
		}
	}
	base := e.execPath(e.orgA, ex.ID)
	pages, sizes := e.pagesOf(t, base+"/entries", "entries")
	requireBudgeted(t, "entries", pages, sizes, "id", ids, bigID)
	pages, sizes = e.pagesOf(t, base+"/messages", "messages")
	requireBudgeted(t, "messages", pages, sizes, "entryId", ids, bigID)

	// The context at the last entry: every message, paged; each page
	// carries the rest of the request.
	pages, sizes = e.pagesOf(t, base+"/entries/"+parent+"/context", "messages")
	var texts []string
	for i, p := range pages {
		if len(p) > 1 {
			require.LessOrEqual(t, sizes[i], testPageBytes*5/4, "context: page %d", i)
		}
		for _, m := range p {
			b, err := json.Marshal(m)
			require.NoError(t, err)
			texts = append(texts, string(b))
		}
	}
	require.Len(t, texts, 30, "the context's messages, once each")
	require.Contains(t, texts[10], strings.Repeat("y", 200<<10), "the large message whole")
	require.Greater(t, len(pages), 30/8)

	// The token timeline: a point per entry, its entries read a budget at
	// a time, the running total carried across pages.
	pages, _ = e.pagesOf(t, base+"/token-timeline", "points")
	var points []string
	var last float64
	for _, p := range pages {
		for _, pt := range p {
			points = append(points, pt["entryId"].(string))
			require.Greater(t, pt["contextTokens"].(float64), last, "the context grows across pages")
			last = pt["contextTokens"].(float64)
		}
	}
	require.Equal(t, ids, points)
	require.Greater(t, len(pages), 30/8)

	// Checkpoints with 20 KiB of metadata each.
	var seqs []string
	for i := range 20 {
		meta, err := json.Marshal(map[string]string{"reason": "turn", "pad": text})
		require.NoError(t, err)
		cp, err := e.es.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: ex.OrgID, ExecutionID: ex.ID, Sequence: i, LeafEntryID: parent, Metadata: meta})
		require.NoError(t, err)
		seqs = append(seqs, cp.ID)
	}
	pages, sizes = e.pagesOf(t, base+"/checkpoints", "checkpoints")
	requireBudgeted(t, "checkpoints", pages, sizes, "id", seqs, "")

	// Executions with a 20 KiB input each, newest first.
	var execs []string
	for range 20 {
		in, err := json.Marshal(map[string]string{"prompt": text})
		require.NoError(t, err)
		x, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent", Input: in})
		require.NoError(t, err)
		execs = append([]string{x.ID}, execs...)
	}
	execs = append(execs, ex.ID)
	pages, sizes = e.pagesOf(t, "/api/orgs/"+e.orgA.Slug+"/agent-executions", "agentExecutions")
	requireBudgeted(t, "executions", pages, sizes, "id", execs, "")
}

// TestContextOfAResumedRunsEntry: an entry of the run an execution resumes
// has its context read through the resuming execution while it is on that
// execution's path (found by its depth, not by reading the path), and is a
// 404 off it.
func TestContextOfAResumedRunsEntry(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOptions{noTemporal: true})
	first, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(t, err)
	c := &conversation{t: t, e: e, ex: first}
	u := c.add("", agentsdk.RoleUser, agentsdk.EntryMessage)
	a := c.add(u.ID, agentsdk.RoleAssistant, agentsdk.EntryMessage)
	off := c.add(u.ID, agentsdk.RoleAssistant, agentsdk.EntryMessage) // another answer: a branch

	resumed, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent", ResumedFrom: first.ID})
	require.NoError(t, err)
	c.ex = resumed
	c.add(a.ID, agentsdk.RoleUser, agentsdk.EntryMessage)

	base := e.execPath(e.orgA, resumed.ID)
	got := e.ok(e.keyA, http.MethodGet, base+"/entries/"+a.ID+"/context", nil)
	require.Len(t, got["messages"], 2, "the resumed run's conversation up to its answer")
	e.fails(e.keyA, http.MethodGet, base+"/entries/"+off.ID+"/context", nil, http.StatusNotFound, "not_found")
}
