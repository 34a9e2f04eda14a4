package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// startOneShot creates a one-shot execution in org A and waits for it to
// complete.
func (e *env) startOneShot() string {
	e.t.Helper()
	ex := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{
		"userPrompt": "hello", "models": scriptedModel,
	})
	id := ex["id"].(string)
	e.waitStatus(id, "COMPLETED", time.Minute)
	return id
}

// TestBadInput sends every kind of bad request: each gets its 4xx and a
// {code, message} body, never a 500.
func TestBadInput(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "done"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool()}})
	done := e.startOneShot()
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	path := base + "/" + done
	valid := func(extra string) string {
		return `{"userPrompt":"hi","models":[{"provider":"scripted","modelId":"m"}]` + extra + `}`
	}
	signal := func(name, value string) string {
		return fmt.Sprintf(`{"signalName":%q,"signalValue":%s}`, name, value)
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"malformed JSON", "POST", base, `{"userPrompt":`, 400, "invalid_argument"},
		{"not an object", "POST", base, `[1,2]`, 400, "invalid_argument"},
		{"unknown field", "POST", base, valid(`,"bogus":1`), 400, "invalid_argument"},
		{"wrong type", "POST", base, `{"userPrompt":42}`, 400, "invalid_argument"},
		{"empty body", "POST", base, ``, 400, "invalid_argument"},
		{"empty userPrompt", "POST", base, `{"userPrompt":"","models":[{"provider":"scripted","modelId":"m"}]}`, 400, "invalid_argument"},
		{"blank userPrompt", "POST", base, `{"userPrompt":"  \n","models":[{"provider":"scripted","modelId":"m"}]}`, 400, "invalid_argument"},
		{"unknown tool", "POST", base, valid(`,"tools":["nope"]`), 400, "invalid_argument"},
		{"unknown model provider", "POST", base, `{"userPrompt":"hi","models":[{"provider":"nope","modelId":"m"}]}`, 400, "invalid_argument"},
		{"model without id", "POST", base, `{"userPrompt":"hi","models":[{"provider":"scripted"}]}`, 400, "invalid_argument"},
		{"no model", "POST", base, `{"userPrompt":"hi"}`, 400, "invalid_argument"},
		{"unknown kind", "POST", base, valid(`,"kind":"nope"`), 400, "invalid_argument"},
		{"unknown config key", "POST", base, valid(`,"config":{"maxTurnz":3}`), 400, "invalid_argument"},
		{"config wrong type", "POST", base, valid(`,"config":{"maxTurns":"many"}`), 400, "invalid_argument"},
		{"config bad mode", "POST", base, valid(`,"config":{"mode":"forever"}`), 400, "invalid_argument"},
		{"temperature out of range", "POST", base, valid(`,"config":{"temperature":7}`), 400, "invalid_argument"},
		{"unknown definition", "POST", base, valid(`,"agentDefinitionId":"00000000-0000-0000-0000-000000000001"`), 400, "invalid_argument"},
		{"malformed parent", "POST", base, valid(`,"parentId":"nope"`), 400, "invalid_argument"},
		{"oversized body", "POST", base, valid(`,"systemPrompt":"` + strings.Repeat("x", testBodyLimit) + `"`), 413, "payload_too_large"},
		{"bad cursor", "GET", base + "?cursor=%21%21", "", 400, "invalid_argument"},
		{"forged cursor", "GET", base + "?cursor=eyJ4IjoxfQ", "", 400, "invalid_argument"},
		{"bad entries cursor", "GET", path + "/entries?cursor=zzz", "", 400, "invalid_argument"},
		{"bad messages cursor", "GET", path + "/messages?cursor=zzz", "", 400, "invalid_argument"},
		{"bad tool-calls cursor", "GET", path + "/tool-calls?cursor=zzz", "", 400, "invalid_argument"},
		{"bad checkpoints cursor", "GET", path + "/checkpoints?cursor=zzz", "", 400, "invalid_argument"},
		{"negative pageSize", "GET", base + "?pageSize=-1", "", 400, "invalid_argument"},
		{"pageSize not a number", "GET", base + "?pageSize=ten", "", 400, "invalid_argument"},
		{"unknown status filter", "GET", base + "?status=SLEEPING", "", 400, "invalid_argument"},
		{"malformed definition filter", "GET", base + "?agentDefinitionId=nope", "", 400, "invalid_argument"},
		{"checkpoint sequence not a number", "GET", path + "/checkpoints/first", "", 400, "invalid_argument"},
		{"unknown signal name", "POST", path + "/signal", signal("shout", `{"text":"hi"}`), 400, "invalid_argument"},
		{"empty signal name", "POST", path + "/signal", `{"signalValue":{"text":"hi"}}`, 400, "invalid_argument"},
		{"userMessage without text", "POST", path + "/signal", signal("userMessage", `{}`), 400, "invalid_argument"},
		{"userMessage with unknown key", "POST", path + "/signal", signal("userMessage", `{"text":"hi","x":1}`), 400, "invalid_argument"},
		{"userMessage not an object", "POST", path + "/signal", signal("userMessage", `"hi"`), 400, "invalid_argument"},
		{"signal to an ended execution", "POST", path + "/signal", signal("userMessage", `{"text":"hi"}`), 409, "conflict"},
		{"cancel an ended execution", "DELETE", path, "", 409, "conflict"},
		{"unknown execution", "GET", base + "/00000000-0000-0000-0000-000000000001", "", 404, "not_found"},
		{"malformed execution id", "GET", base + "/nope", "", 404, "not_found"},
		{"unknown entry", "GET", path + "/entries/00000000-0000-0000-0000-000000000001", "", 404, "not_found"},
		{"unknown checkpoint", "GET", path + "/checkpoints/999", "", 404, "not_found"},
		{"unknown tool call", "GET", path + "/tool-calls/00000000-0000-0000-0000-000000000001", "", 404, "not_found"},
		{"unknown organization", "GET", "/api/orgs/nobody/agent-executions", "", 404, "not_found"},
		{"unknown route", "GET", "/api/nothing", "", 404, "not_found"},
		{"wrong method", "PATCH", path, `{}`, 405, "method_not_allowed"},
		{"bad Last-Event-ID", "GET", path + "/stream?lastEventId=yesterday", "", 400, "invalid_argument"},
		{"bad definition", "POST", "/api/orgs/" + e.orgA.Slug + "/agent-definitions", `{"name":"x","slug":"Not A Slug"}`, 400, "invalid_argument"},
		{"definition with unknown tool", "POST", "/api/orgs/" + e.orgA.Slug + "/agent-definitions", `{"name":"x","slug":"x","tools":["nope"]}`, 400, "invalid_argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			e.fails(e.keyA, c.method, c.path, body, c.status, c.code)
		})
	}

	t.Run("oversized chunked body", func(t *testing.T) {
		// No Content-Length: the limit holds while reading.
		req, err := http.NewRequest(http.MethodPost, e.base+base, io.MultiReader(strings.NewReader(`{"userPrompt":"`),
			strings.NewReader(strings.Repeat("y", 2*testBodyLimit)), strings.NewReader(`"}`)))
		require.NoError(t, err)
		req.ContentLength = -1
		req.Header.Set("Authorization", "Bearer "+e.keyA)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s", raw)
		require.JSONEq(t, fmt.Sprintf(`{"code":"payload_too_large","message":"the request body is larger than %d bytes"}`, testBodyLimit), string(raw))
	})
}
