package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// lossySummary keeps the customer, the file and the refund, and drops the
// order number.
const lossySummary = "## Goal\nRefund an order for Acme Logistics.\n## Files and artefacts touched\ninvoices/2026/acme.pdf"

// TestCompressionAnalysisFlagsLostFacts: a compaction whose summary drops
// the order number the user gave flags the user's message possibly_lost
// with that number missing; the answer whose file and customer the summary
// kept is not flagged. The contexts either side resolve through
// context-at-entry, and bad names are 404s.
func TestCompressionAnalysisFlagsLostFacts(t *testing.T) {
	model := scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		if strings.HasPrefix(req.System, "You compact") {
			return scripted.Turn{Text: lossySummary}
		}
		if last := req.Messages[len(req.Messages)-1].Text(); strings.Contains(last, "84713") {
			return scripted.Turn{Text: "The invoice is invoices/2026/acme.pdf for Acme Logistics."}
		}
		return scripted.Turn{Text: "You are welcome."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Please refund order 84713.", "models": scriptedModel,
		"config": map[string]any{"mode": "multi-turn"},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	e.waitStatus(id, "WAITING", time.Minute)
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "Thanks."}})
	poll(t, time.Minute, func() bool {
		return len(items(t, e.ok(e.keyA, http.MethodGet, path+"/messages", nil), "messages")) == 4
	}, "the second answer never came")
	e.waitStatus(id, "WAITING", time.Minute)
	msgs := items(t, e.ok(e.keyA, http.MethodGet, path+"/messages", nil), "messages")
	lastBefore := msgs[3]["entryId"].(string)

	e.ok(e.keyA, http.MethodPost, path+"/compact", map[string]any{})
	var comp string
	poll(t, time.Minute, func() bool {
		for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
			if en["type"] == string(agentsdk.EntryCompaction) {
				comp = en["id"].(string)
			}
		}
		return comp != ""
	}, "no compaction entry")

	a := e.ok(e.keyA, http.MethodGet, path+"/compactions/"+comp+"/analysis", nil)
	require.Equal(t, comp, a["entryId"])
	require.Equal(t, "manual", a["trigger"])
	require.Equal(t, lossySummary, a["summary"])
	entries := items(t, a, "entries")
	require.Len(t, entries, 2, "the first turn was summarised: %v", entries)
	user, answer := entries[0], entries[1]
	require.Equal(t, msgs[0]["entryId"], user["entryId"])
	require.Equal(t, "user", user["role"])
	require.Equal(t, []any{"84713"}, user["terms"])
	require.Equal(t, []any{"84713"}, user["missingTerms"])
	require.Equal(t, true, user["possiblyLost"])
	require.Equal(t, "assistant", answer["role"])
	require.ElementsMatch(t, []any{"invoices/2026/acme.pdf", "Acme", "Logistics"}, answer["keptTerms"])
	require.Empty(t, answer["missingTerms"])
	require.NotEqual(t, true, answer["possiblyLost"])
	require.EqualValues(t, 1, a["possiblyLost"])

	// The contexts either side: the whole conversation before, the summary
	// and what was kept after; tokens as the audit counts them.
	audit := e.ok(e.keyA, http.MethodGet, path+"/compactions/"+comp, nil)
	before, after := a["contextBefore"].(map[string]any), a["contextAfter"].(map[string]any)
	require.Equal(t, lastBefore, before["entryId"])
	require.Equal(t, audit["tokensBefore"], before["tokens"])
	require.Equal(t, comp, after["entryId"])
	require.Equal(t, audit["tokensAfter"], after["tokens"])
	require.EqualValues(t, int64Field(t, audit, "tokensBefore")-int64Field(t, audit, "tokensAfter"), a["tokensSaved"])
	require.Positive(t, int64Field(t, a, "tokensSaved"))
	ctxBefore := e.ok(e.keyA, http.MethodGet, path+"/entries/"+lastBefore+"/context", nil)
	// At an answer, the context is what its call read: all but the answer.
	require.Len(t, ctxBefore["messages"], 3)
	require.Contains(t, mustJSON(t, ctxBefore["messages"]), "84713")
	require.Empty(t, ctxBefore["compactionEntryId"])
	ctxAfter := e.ok(e.keyA, http.MethodGet, path+"/entries/"+comp+"/context", nil)
	require.Equal(t, comp, ctxAfter["compactionEntryId"])
	require.Contains(t, mustJSON(t, ctxAfter["messages"]), "Acme Logistics")
	require.NotContains(t, mustJSON(t, ctxAfter["messages"]), "84713")

	// Bad input.
	e.fails(e.keyA, http.MethodGet, path+"/compactions/"+lastBefore+"/analysis", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, path+"/compactions/00000000-0000-0000-0000-000000000000/analysis", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, base+"/00000000-0000-0000-0000-000000000000/compactions/"+comp+"/analysis", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/compactions/"+comp+"/analysis", nil, http.StatusNotFound, "not_found")
}
