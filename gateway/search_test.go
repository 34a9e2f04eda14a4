package gateway_test

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// promptedModel does what the first user message says: "echo X" calls
// echo with X, then answers; "fail" fails for good; "echo X then fail"
// calls echo, then fails; anything else is answered at once.
func promptedModel() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		var prompt string
		for _, m := range req.Messages {
			if m.Role == agentsdk.RoleUser {
				prompt = m.Text()
				break
			}
		}
		last := req.Messages[len(req.Messages)-1]
		fail := scripted.Turn{FailTimes: 100, Err: &agentsdk.ModelError{Message: "model refused: quota 7 exceeded", Retryable: false}}
		switch {
		case prompt == "fail":
			return fail
		case strings.HasPrefix(prompt, "echo ") && last.Role == agentsdk.RoleUser:
			text, _, _ := strings.Cut(strings.TrimPrefix(prompt, "echo "), " then")
			return scripted.Turn{ToolCalls: echoCall("call_1", text), Usage: agentsdk.Usage{Input: 10, Output: 5}}
		case strings.HasSuffix(prompt, "then fail"):
			return fail
		}
		return scripted.Turn{Text: "ok", Usage: agentsdk.Usage{Input: 10, Output: 5}}
	})
}

// startPrompted starts one execution of promptedModel and waits for its
// status.
func (e *env) startPrompted(prompt, status string) string {
	e.t.Helper()
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": prompt, "models": scriptedModel, "tools": []string{"echo"},
	})
	id := ex["id"].(string)
	e.waitStatus(id, status, time.Minute)
	return id
}

// matched are the IDs of a search's matches, all pages, pageSize at a time.
func (e *env) matched(query url.Values, pageSize int) []string {
	e.t.Helper()
	query.Set("pageSize", strconv.Itoa(pageSize))
	var out []string
	for range 100 {
		page := e.ok(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/agent-executions:search?"+query.Encode(), nil)
		for _, m := range page["matches"].([]any) {
			out = append(out, m.(map[string]any)["execution"].(map[string]any)["id"].(string))
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			sort.Strings(out)
			return out
		}
		query.Set("cursor", next)
	}
	require.Fail(e.t, "search never ended")
	return nil
}

func sorted(ids ...string) []string {
	sort.Strings(ids)
	return ids
}

// TestSearchRunsByToolCalled: executions are found by the tool they
// called and its arguments, with model, status, cost and time filters, a
// page at a time; each match carries its summary; bad filters are 400s.
func TestSearchRunsByToolCalled(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{promptedModel()}, tools: []*agentsdk.Tool{echoTool()}})
	start := time.Now().Add(-time.Second).UTC()
	needle := e.startPrompted("echo a needle here", "COMPLETED")
	hay := e.startPrompted("echo hay", "COMPLETED")
	plain := e.startPrompted("say hi", "COMPLETED")
	failed := e.startPrompted("fail", "FAILED")

	require.Equal(t, sorted(needle, hay), e.matched(url.Values{"toolName": {"echo"}}, 1), "by tool, one per page")
	require.Equal(t, []string{needle}, e.matched(url.Values{"toolName": {"echo"}, "toolArguments": {"NEEDLE"}}, 5))
	require.Equal(t, []string{needle}, e.matched(url.Values{"toolArguments": {"needle"}}, 5))
	require.Empty(t, e.matched(url.Values{"toolName": {"echo"}, "toolArguments": {"%"}}, 5), "a pattern's wildcards match themselves")
	require.Empty(t, e.matched(url.Values{"toolName": {"rm"}}, 5))
	require.Equal(t, sorted(needle, hay, plain), e.matched(url.Values{"model": {"scripted/scripted-1"}, "status": {"COMPLETED"}}, 5))
	require.Equal(t, []string{failed}, e.matched(url.Values{"status": {"FAILED"}}, 5))
	require.Equal(t, sorted(needle, hay, plain, failed), e.matched(url.Values{"from": {start.Format(time.RFC3339Nano)}}, 2))
	require.Empty(t, e.matched(url.Values{"to": {start.Format(time.RFC3339Nano)}}, 5))
	require.Empty(t, e.matched(url.Values{"minCost": {"1000"}}, 5))

	page := e.ok(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/agent-executions:search?toolArguments=needle", nil)
	sum := page["matches"].([]any)[0].(map[string]any)["summary"].(map[string]any)
	require.EqualValues(t, 2, sum["turns"])
	require.EqualValues(t, 1, sum["toolCalls"])
	require.EqualValues(t, 20, sum["inputTokens"])
	require.Equal(t, []any{"echo"}, sum["tools"])
	require.Equal(t, []any{"scripted/scripted-1"}, sum["models"])

	// Another organization finds none of them.
	other := e.ok(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions:search?toolName=echo", nil)
	require.Empty(t, other["matches"])

	search := "/api/orgs/" + e.orgA.Slug + "/agent-executions:search?"
	for _, q := range []string{"status=DONE", "from=yesterday", "from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z",
		"minCost=-1", "minCost=2&maxCost=1", "agentDefinitionId=nope", "cursor=zzz", "pageSize=-1", "minCost=cheap"} {
		r := e.fails(e.keyA, http.MethodGet, search+q, nil, http.StatusBadRequest, "invalid_argument")
		require.NotContains(t, r.Body["message"], "entrystore", q)
	}
}

// TestFailureClusters: failed executions are grouped by error class and
// the last tool call before the failure, largest first, with examples;
// the definition's statistics count them.
func TestFailureClusters(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{promptedModel()}, tools: []*agentsdk.Tool{echoTool()}})
	afterEcho := []string{e.startPrompted("echo x then fail", "FAILED"), e.startPrompted("echo y then fail", "FAILED")}
	atOnce := e.startPrompted("fail", "FAILED")
	e.startPrompted("say hi", "COMPLETED")

	got := e.ok(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/failure-clusters", nil)
	clusters := got["failureClusters"].([]any)
	require.Len(t, clusters, 2)
	big, small := clusters[0].(map[string]any), clusters[1].(map[string]any)
	require.EqualValues(t, 2, big["count"])
	require.Equal(t, "echo", big["lastToolName"])
	require.Equal(t, "completed", big["lastToolStatus"])
	require.ElementsMatch(t, afterEcho, big["exampleExecutionIds"])
	require.EqualValues(t, 1, small["count"])
	require.Equal(t, "", small["lastToolName"])
	require.Equal(t, []any{atOnce}, small["exampleExecutionIds"])
	require.Equal(t, big["errorClass"], small["errorClass"], "the same error, numbers blanked")
	require.Equal(t, "model refused", big["errorClass"], "the head of the error, details dropped")

	// One cluster a page: the cursor moves on to the second.
	first := e.ok(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/failure-clusters?pageSize=1", nil)
	require.Len(t, first["failureClusters"], 1)
	second := e.ok(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/failure-clusters?pageSize=1&cursor="+first["nextCursor"].(string), nil)
	require.Equal(t, []any{small}, second["failureClusters"])

	// The error class finds them in a search.
	require.Equal(t, sorted(append(afterEcho, atOnce)...), e.matched(url.Values{"errorClass": {big["errorClass"].(string)}}, 5))
	require.Empty(t, e.ok(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/failure-clusters", nil)["failureClusters"])
	e.fails(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/failure-clusters?from=soon", nil, http.StatusBadRequest, "invalid_argument")
}

// TestDefinitionStats: a definition's executions are counted by status
// and spread (p50, p90, p99, max) by turns, tool calls, cost and
// duration; another organization's definition is a 404.
func TestDefinitionStats(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{promptedModel()}, tools: []*agentsdk.Tool{echoTool()}})
	defs := "/api/orgs/" + e.orgA.Slug + "/agent-definitions"
	def := e.ok(e.keyA, http.MethodPost, defs, map[string]any{"name": "Echoer", "slug": "echoer", "models": scriptedModel, "tools": []string{"echo"}})["id"].(string)
	for _, p := range []struct{ prompt, status string }{{"echo a", "COMPLETED"}, {"echo b", "COMPLETED"}, {"say hi", "COMPLETED"}, {"fail", "FAILED"}} {
		id := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{"agentDefinitionId": def, "userPrompt": p.prompt})["id"].(string)
		e.waitStatus(id, p.status, time.Minute)
	}
	st := e.ok(e.keyA, http.MethodGet, defs+"/"+def+"/stats", nil)
	require.EqualValues(t, 4, st["executions"])
	require.Equal(t, map[string]any{"COMPLETED": 3.0, "FAILED": 1.0}, st["byStatus"])
	turns, tools, dur := st["turns"].(map[string]any), st["toolCalls"].(map[string]any), st["durationMs"].(map[string]any)
	require.EqualValues(t, 4, turns["count"])
	require.EqualValues(t, 2, turns["max"], "echo, then the answer")
	require.EqualValues(t, 1, tools["max"])
	require.EqualValues(t, 0.5, tools["p50"], "two of four executions called a tool")
	require.EqualValues(t, 4, dur["count"], "every execution has ended")
	require.Greater(t, dur["p99"].(float64), 0.0)

	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-definitions/"+def+"/stats", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, defs+"/"+def+"/stats?from=later", nil, http.StatusBadRequest, "invalid_argument")
}
