package gateway_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestScheduledFollowUpContinuesTheTree: a follow-up scheduled over REST
// is delivered, when due, to the same execution as a user message whose
// parent is the leaf the execution had: the tree goes on. A second one,
// cancelled before it is due, is never delivered (a repeated cancel
// answers the same); cancelling one delivered already is a 409.
func TestScheduledFollowUpContinuesTheTree(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "hello"}, scripted.Turn{Text: "checked, all fine"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "hi", "models": scriptedModel, "config": map[string]any{"mode": "multi-turn"},
	})
	id := ex["id"].(string)
	e.waitStatus(id, "WAITING", time.Minute)
	before := e.all(base+"/"+id+"/messages?pageSize=100", "messages")
	leaf := before[len(before)-1]["entryId"]
	require.NotEmpty(t, leaf)

	later := e.ok(e.keyA, http.MethodPost, base+"/"+id+"/follow-ups", map[string]any{"text": "never mind", "afterSeconds": 3600})
	require.Equal(t, "scheduled", later["status"])
	f := e.ok(e.keyA, http.MethodPost, base+"/"+id+"/follow-ups", map[string]any{"text": "time to check the deploy", "afterSeconds": 1})
	require.Equal(t, "scheduled", f["status"])
	require.Equal(t, id, f["executionId"])
	cancelled := e.ok(e.keyA, http.MethodDelete, base+"/"+id+"/follow-ups/"+later["id"].(string), nil)
	require.Equal(t, "cancelled", cancelled["status"])
	again := e.ok(e.keyA, http.MethodDelete, base+"/"+id+"/follow-ups/"+later["id"].(string), nil)
	require.Equal(t, "cancelled", again["status"], "a repeated cancel answers as the first")

	var user map[string]any
	poll(t, time.Minute, func() bool {
		for _, en := range e.all(base+"/"+id+"/entries?pageSize=100", "entries") {
			if en["role"] == "user" && en["parentId"] == leaf {
				user = en
			}
		}
		return user != nil
	}, "the follow-up never joined the tree under %v", leaf)
	require.Equal(t, id, user["executionId"], "the same execution")
	e.waitStatus(id, "WAITING", time.Minute)
	msgs := e.all(base+"/"+id+"/messages?pageSize=100", "messages")
	require.Equal(t, "checked, all fine", msgs[len(msgs)-1]["content"].([]any)[0].(map[string]any)["text"])

	list := e.all(base+"/"+id+"/follow-ups?pageSize=100", "followUps")
	require.Len(t, list, 2)
	byID := map[string]map[string]any{}
	for _, x := range list {
		byID[x["id"].(string)] = x
	}
	require.Equal(t, "delivered", byID[f["id"].(string)]["status"])
	require.NotEmpty(t, byID[f["id"].(string)]["signalId"])
	require.Equal(t, "cancelled", byID[later["id"].(string)]["status"])
	e.fails(e.keyA, http.MethodDelete, base+"/"+id+"/follow-ups/"+f["id"].(string), nil, http.StatusConflict, "conflict")
}

// TestFollowUpBadInput: a follow-up without a time, in the past, with a
// malformed time, with both times, a negative delay or no text is a 400
// {code, message}; nothing is scheduled.
func TestFollowUpBadInput(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "hello"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "hi", "models": scriptedModel, "config": map[string]any{"mode": "multi-turn"},
	})
	path := base + "/" + ex["id"].(string) + "/follow-ups"
	for name, body := range map[string]any{
		"no time":      map[string]any{"text": "x"},
		"past":         map[string]any{"text": "x", "at": "2001-01-01T00:00:00Z"},
		"malformed at": map[string]any{"text": "x", "at": "tomorrow"},
		"both":         map[string]any{"text": "x", "at": time.Now().Add(time.Hour).Format(time.RFC3339), "afterSeconds": 5},
		"negative":     map[string]any{"text": "x", "afterSeconds": -5},
		"too far":      map[string]any{"text": "x", "afterSeconds": 400 * 24 * 3600},
		"no text":      map[string]any{"afterSeconds": 5},
		"wrong type":   `{"text":"x","afterSeconds":"soon"}`,
	} {
		t.Run(name, func(t *testing.T) {
			e.fails(e.keyA, http.MethodPost, path, body, http.StatusBadRequest, "invalid_argument")
		})
	}
	require.Empty(t, e.all(path+"?pageSize=100", "followUps"), "nothing was scheduled")
}
