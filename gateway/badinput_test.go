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
	defs := "/api/orgs/" + e.orgA.Slug + "/agent-definitions"
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
		msg                      string // when set, the exact message
	}{
		{"malformed JSON", "POST", base, `{"userPrompt":`, 400, "invalid_argument", ""},
		{"not an object", "POST", base, `[1,2]`, 400, "invalid_argument", ""},
		{"unknown field", "POST", base, valid(`,"bogus":1`), 400, "invalid_argument", ""},
		{"wrong type", "POST", base, `{"userPrompt":42}`, 400, "invalid_argument", ""},
		{"empty body", "POST", base, ``, 400, "invalid_argument", ""},
		{"empty userPrompt", "POST", base, `{"userPrompt":"","models":[{"provider":"scripted","modelId":"m"}]}`, 400, "invalid_argument", ""},
		{"blank userPrompt", "POST", base, `{"userPrompt":"  \n","models":[{"provider":"scripted","modelId":"m"}]}`, 400, "invalid_argument", ""},
		{"unknown tool", "POST", base, valid(`,"tools":["nope"]`), 400, "invalid_argument", ""},
		{"unknown model provider", "POST", base, `{"userPrompt":"hi","models":[{"provider":"nope","modelId":"m"}]}`, 400, "invalid_argument", ""},
		{"model without id", "POST", base, `{"userPrompt":"hi","models":[{"provider":"scripted"}]}`, 400, "invalid_argument", ""},
		{"no model", "POST", base, `{"userPrompt":"hi"}`, 400, "invalid_argument", ""},
		{"unknown kind", "POST", base, valid(`,"kind":"nope"`), 400, "invalid_argument", ""},
		{"unknown config key", "POST", base, valid(`,"config":{"maxTurnz":3}`), 400, "invalid_argument", ""},
		{"config wrong type", "POST", base, valid(`,"config":{"maxTurns":"many"}`), 400, "invalid_argument", ""},
		{"config bad mode", "POST", base, valid(`,"config":{"mode":"forever"}`), 400, "invalid_argument", ""},
		{"temperature out of range", "POST", base, valid(`,"config":{"temperature":7}`), 400, "invalid_argument", ""},
		{"unknown definition", "POST", base, valid(`,"agentDefinitionId":"00000000-0000-0000-0000-000000000001"`), 400, "invalid_argument", ""},
		{"malformed parent", "POST", base, valid(`,"parentId":"nope"`), 400, "invalid_argument", ""},
		{"oversized body", "POST", base, valid(`,"systemPrompt":"` + strings.Repeat("x", testBodyLimit) + `"`), 413, "payload_too_large", ""},
		{"bad cursor", "GET", base + "?cursor=%21%21", "", 400, "invalid_argument", ""},
		{"forged cursor", "GET", base + "?cursor=eyJ4IjoxfQ", "", 400, "invalid_argument", ""},
		{"bad entries cursor", "GET", path + "/entries?cursor=zzz", "", 400, "invalid_argument", ""},
		{"bad messages cursor", "GET", path + "/messages?cursor=zzz", "", 400, "invalid_argument", ""},
		{"bad tool-calls cursor", "GET", path + "/tool-calls?cursor=zzz", "", 400, "invalid_argument", ""},
		{"bad checkpoints cursor", "GET", path + "/checkpoints?cursor=zzz", "", 400, "invalid_argument", ""},
		{"negative pageSize", "GET", base + "?pageSize=-1", "", 400, "invalid_argument", ""},
		{"pageSize not a number", "GET", base + "?pageSize=ten", "", 400, "invalid_argument", ""},
		{"unknown status filter", "GET", base + "?status=SLEEPING", "", 400, "invalid_argument", ""},
		{"malformed definition filter", "GET", base + "?agentDefinitionId=nope", "", 400, "invalid_argument", ""},
		{"checkpoint sequence not a number", "GET", path + "/checkpoints/first", "", 400, "invalid_argument", ""},
		{"unknown signal name", "POST", path + "/signal", signal("shout", `{"text":"hi"}`), 400, "invalid_argument", ""},
		{"empty signal name", "POST", path + "/signal", `{"signalValue":{"text":"hi"}}`, 400, "invalid_argument", ""},
		{"userMessage without text", "POST", path + "/signal", signal("userMessage", `{}`), 400, "invalid_argument", ""},
		{"userMessage with unknown key", "POST", path + "/signal", signal("userMessage", `{"text":"hi","x":1}`), 400, "invalid_argument", ""},
		{"userMessage not an object", "POST", path + "/signal", signal("userMessage", `"hi"`), 400, "invalid_argument", ""},
		{"signal to an ended execution", "POST", path + "/signal", signal("userMessage", `{"text":"hi"}`), 409, "conflict", ""},
		{"cancel an ended execution", "DELETE", path, "", 409, "conflict", ""},
		{"unknown execution", "GET", base + "/00000000-0000-0000-0000-000000000001", "", 404, "not_found", ""},
		{"malformed execution id", "GET", base + "/nope", "", 404, "not_found", ""},
		{"unknown entry", "GET", path + "/entries/00000000-0000-0000-0000-000000000001", "", 404, "not_found", ""},
		{"unknown checkpoint", "GET", path + "/checkpoints/999", "", 404, "not_found", ""},
		{"unknown tool call", "GET", path + "/tool-calls/00000000-0000-0000-0000-000000000001", "", 404, "not_found", ""},
		{"unknown organization", "GET", "/api/orgs/nobody/agent-executions", "", 404, "not_found", ""},
		{"unknown route", "GET", "/api/nothing", "", 404, "not_found", ""},
		{"wrong method", "PATCH", path, `{}`, 405, "method_not_allowed", ""},
		{"bad Last-Event-ID", "GET", path + "/stream?lastEventId=yesterday", "", 400, "invalid_argument", ""},
		{"bad definition", "POST", "/api/orgs/" + e.orgA.Slug + "/agent-definitions", `{"name":"x","slug":"Not A Slug"}`, 400, "invalid_argument", ""},
		{"definition with unknown tool", "POST", "/api/orgs/" + e.orgA.Slug + "/agent-definitions", `{"name":"x","slug":"x","tools":["nope"]}`, 400, "invalid_argument", ""},

		// What a new client tried (issues 10 and 20): each says what was
		// wrong in the API's terms.
		{"trailing bytes", "POST", base, valid(``) + ` xyz`, 400, "invalid_argument", "the request body is not valid JSON: unexpected data after the JSON value at byte 69"},
		{"a second object", "POST", base, valid(``) + valid(``), 400, "invalid_argument", "the request body is not valid JSON: unexpected data after the JSON value at byte 68"},
		{"body cut short", "POST", base, `{"userPrompt":"hi","models":[`, 400, "invalid_argument", "the request body is not valid JSON: it ends at byte 29 before the value is complete"},
		{"bad character", "POST", base, `{"userPrompt" "hi"}`, 400, "invalid_argument", `the request body is not valid JSON: invalid character '"' after object key at byte 15`},
		{"unknown top-level field", "POST", base, `{"prompt":"hi"}`, 400, "invalid_argument", `unknown field "prompt" in CreateAgentExecution request (known: agentDefinitionId, config, kind, metadata, models, parentId, persistenceMode, systemPrompt, tools, userPrompt)`},
		{"unknown model field", "POST", base, `{"userPrompt":"hi","models":[{"provider":"scripted","model":"m"}]}`, 400, "invalid_argument", `unknown field "models[0].model" in CreateAgentExecution request (known: endpoint, modelId, provider)`},
		{"userPrompt a number", "POST", base, `{"userPrompt":42}`, 400, "invalid_argument", "userPrompt must be a string, not the number 42"},
		{"tools not a list", "POST", base, valid(`,"tools":"echo"`), 400, "invalid_argument", `tools must be a list, not the string "echo"`},
		{"maxTurns 1e12", "POST", base, valid(`,"config":{"maxTurns":1e12}`), 400, "invalid_argument", "config.maxTurns must be a whole number from 0 to 1000 (0 = the default, 50); got 1e12"},
		{"maxTurns 2147483648", "POST", base, valid(`,"config":{"maxTurns":2147483648}`), 400, "invalid_argument", "config.maxTurns must be a whole number from 0 to 1000 (0 = the default, 50); got 2147483648"},
		{"maxTurns fractional", "POST", base, valid(`,"config":{"maxTurns":1.5}`), 400, "invalid_argument", "config.maxTurns must be a whole number from 0 to 1000 (0 = the default, 50); got 1.5"},
		{"maxTurns a string", "POST", base, valid(`,"config":{"maxTurns":"many"}`), 400, "invalid_argument", `config.maxTurns must be a whole number, not the string "many"`},
		{"maxTokens too large", "POST", base, valid(`,"config":{"maxTokens":1000001}`), 400, "invalid_argument", "config.maxTokens must be a whole number from 0 to 1000000 (0 = the default, 4096); got 1000001"},
		{"thinkingBudget negative", "POST", base, valid(`,"config":{"thinkingBudget":-1}`), 400, "invalid_argument", "config.thinkingBudget must be a whole number from 0 to 1000000 (0 = off; unset = 4096 on models that support thinking); got -1"},
		{"loopThreshold below -1", "POST", base, valid(`,"config":{"loopThreshold":-2}`), 400, "invalid_argument", "config.loopThreshold must be a whole number from -1 to 100 (0 = the default, 3; -1 = off); got -2"},
		{"toolOutputLimit too large", "POST", base, valid(`,"config":{"toolOutputLimit":2000000}`), 400, "invalid_argument", "config.toolOutputLimit must be a whole number from 0 to 1048576 (0 = the default, 16384 bytes); got 2000000"},
		{"temperature 7", "POST", base, valid(`,"config":{"temperature":7}`), 400, "invalid_argument", "config.temperature must be a number from 0 to 2; got 7"},
		{"unknown config key named", "POST", base, valid(`,"config":{"maxTurnz":3}`), 400, "invalid_argument", `unknown field "config.maxTurnz" in CreateAgentExecution request (known: agent, approvalTimeout, budget, clientTools, compaction, counterfactual, loopThreshold, maxParallelTools, maxSteps, maxTokens, maxTurns, mode, models, persistenceMode, systemPrompt, temperature, thinkingBudget, toolOutputLimit, toolPolicy, tools)`},
		{"unknown tool policy", "POST", base, valid(`,"config":{"toolPolicy":{"word_count":"sometimes"}}`), 400, "invalid_argument", `config.toolPolicy["word_count"] must be auto, ask or forbid; got "sometimes"`},
		{"config mode a number", "POST", base, valid(`,"config":{"mode":3}`), 400, "invalid_argument", "config.mode must be a string, not the number 3"},
		{"definition maxTurns out of range", "POST", defs, `{"name":"x","slug":"x","config":{"maxTurns":5000}}`, 400, "invalid_argument", "config.maxTurns must be a whole number from 0 to 1000 (0 = the default, 50); got 5000"},
		{"definition without slug", "POST", defs, `{"name":"x"}`, 400, "invalid_argument", `slug is required: 1 to 63 lowercase letters, digits and '-', starting with a letter or digit (e.g. "research-bot")`},
		{"definition with a bad slug", "POST", defs, `{"name":"x","slug":"Research Bot"}`, 400, "invalid_argument", `slug "Research Bot" is not valid: use 1 to 63 lowercase letters, digits and '-', starting with a letter or digit (e.g. "research-bot")`},
		{"unknown provider anthropic", "POST", base, `{"userPrompt":"hi","models":[{"provider":"anthropic","modelId":"claude-sonnet-4-5"}]}`, 400, "invalid_argument", `~^models\[0\] provider "anthropic" model "claude-sonnet-4-5": no live worker on task queue "[^"]+" serves it; they offer endpoint "scripted" \(provider "scripted", models \*\); to serve it, start a worker with ANTHROPIC_API_KEY set \(or an anthropic endpoint in its configuration\)$`},
		{"pageSize a word", "GET", base + "?pageSize=ten", "", 400, "invalid_argument", "query parameter pageSize must be a whole number from -2147483648 to 2147483647; got ten"},
		{"pageSize past int32", "GET", base + "?pageSize=99999999999", "", 400, "invalid_argument", "query parameter pageSize must be a whole number from -2147483648 to 2147483647; got 99999999999"},
		{"sequence a word", "GET", path + "/checkpoints/first", "", 400, "invalid_argument", "the path parameter sequence must be a whole number"},
		{"signal with unknown field", "POST", path + "/signal", `{"signalName":"userMessage","value":{"text":"hi"}}`, 400, "invalid_argument", `unknown field "value" in SignalAgentExecution request (known: signalName, signalValue)`},
		{"userMessage with unknown key named", "POST", path + "/signal", signal("userMessage", `{"text":"hi","x":1}`), 400, "invalid_argument", `signalValue of userMessage must be {"text": "..."}: unknown field "x" in signalValue (known: text)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			r := e.fails(e.keyA, c.method, c.path, body, c.status, c.code)
			msg := r.Body["message"].(string)
			for _, internal := range []string{"proto:", "strconv", "Go struct", "Go value", "unexpected EOF", "json:", "rpc error", "pgx", "SQLSTATE"} {
				require.NotContains(t, msg, internal, "the message names an internal")
			}
			switch {
			case strings.HasPrefix(c.msg, "~"): // a pattern, for messages naming the test's own queue
				require.Regexp(t, c.msg[1:], msg)
			case c.msg != "":
				require.Equal(t, c.msg, msg)
			}
		})
	}

	// A body in another media type than JSON is a 415 on every route that
	// takes one; without a Content-Type it is taken as JSON.
	for _, rt := range []struct{ method, path, body string }{
		{"POST", base, valid(``)},
		{"POST", path + "/signal", signal("userMessage", `{"text":"hi"}`)},
		{"POST", defs, `{"name":"x","slug":"x"}`},
		{"PUT", defs + "/00000000-0000-0000-0000-000000000001", `{"name":"x","slug":"x"}`},
	} {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml; charset=utf-8"} {
			t.Run("415 "+ct+" "+rt.method+" "+rt.path, func(t *testing.T) {
				req, err := http.NewRequest(rt.method, e.base+rt.path, strings.NewReader(rt.body))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+e.keyA)
				req.Header.Set("Content-Type", ct)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, "%s", raw)
				require.JSONEq(t, fmt.Sprintf(`{"code":"unsupported_media_type","message":%q}`,
					fmt.Sprintf("Content-Type %q is not supported: send the body as JSON with Content-Type: application/json", ct)), string(raw))
			})
		}
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
