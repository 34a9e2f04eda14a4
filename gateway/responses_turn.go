package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// respRef is what a response ID stands for: a stretch of one execution's
// conversation that starts at one entry — the execution's input, or the
// entry a signal appended (a user message, an approval decision) — and
// runs to the entry before the next such one. The ID is only a reference:
// everything a response holds is read from the tree, so a response is as
// durable as the turn it names, and another organization's ID finds no
// execution (404).
type respRef struct {
	Exec   string
	Signal string // "" for the execution's input
}

// responseIDPrefix starts every response ID, as OpenAI's do.
const responseIDPrefix = "resp_"

func (r respRef) id() string {
	return responseIDPrefix + base64.RawURLEncoding.EncodeToString([]byte(r.Exec+"/"+r.Signal))
}

// startKey is the idempotency key of the entry the response starts at.
func (r respRef) startKey() string {
	if r.Signal == "" {
		return entrystore.InputKey(r.Exec)
	}
	return "signal/" + r.Signal
}

// parseResponseID reads an ID id() made; false for anything else.
func parseResponseID(id string) (respRef, bool) {
	raw, ok := strings.CutPrefix(id, responseIDPrefix)
	if !ok {
		return respRef{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return respRef{}, false
	}
	ex, sig, ok := strings.Cut(string(b), "/")
	if !ok || uuid.Validate(ex) != nil || (sig != "" && uuid.Validate(sig) != nil) {
		return respRef{}, false
	}
	return respRef{Exec: ex, Signal: sig}, true
}

// turn is a response read from the tree.
type turn struct {
	ref respRef
	ex  entrystore.Execution
	// started: the start entry is on the execution's path; entries are
	// those after it, up to the next response's start.
	started bool
	start   entrystore.Entry
	entries []entrystore.Entry
	// last: no response follows this one on the path.
	last bool
	// awaiting are the calls of the turn waiting for a decision,
	// clientCalls those waiting for the client's output.
	awaiting    map[string]entrystore.ToolCall
	clientCalls map[string]entrystore.ToolCall
	// prev is the start of the response before this one on the path, if
	// any: it may belong to the execution this one was forked from.
	prev *entrystore.Entry
}

// previous is the ID of the response before t, "" for the first.
func (t *turn) previous() string {
	if t.prev == nil {
		return ""
	}
	return refOf(*t.prev).id()
}

// refOf is the response that starts at e.
func refOf(e entrystore.Entry) respRef {
	sig, ok := strings.CutPrefix(e.IdempotencyKey, "signal/")
	if !ok {
		sig = ""
	}
	return respRef{Exec: e.ExecutionID, Signal: sig}
}

// leaf is the turn's last entry: where a response that continues it
// continues the tree.
func (t *turn) leaf() string {
	if len(t.entries) > 0 {
		return t.entries[len(t.entries)-1].ID
	}
	return t.start.ID
}

// startsResponse reports whether e begins a response of its own: a user
// message, an approval decision or a client tool call's output, each
// appended from a signal.
func startsResponse(e entrystore.Entry) bool {
	return (e.Type == string(agentsdk.EntryMessage) && e.Role == string(agentsdk.RoleUser)) ||
		e.Type == string(agentsdk.EntryApproval) ||
		(e.Type == string(agentsdk.EntryMessage) && e.Role == string(agentsdk.RoleToolResult) && strings.HasPrefix(e.IdempotencyKey, "signal/"))
}

// loadTurn reads the response ref names; another organization's is a 404.
func (s *service) loadTurn(ctx context.Context, org entrystore.Org, ref respRef) (*turn, error) {
	ex, cs, err := s.conversation(ctx, org.ID, ref.Exec)
	if err != nil {
		return nil, err
	}
	t := &turn{ref: ref, ex: ex, last: true}
	if ex.LeafEntryID == "" {
		return t, nil
	}
	path, err := cs.Path(ctx, ex.OrgID, ex.LeafEntryID)
	if err != nil {
		return nil, toStatus(s.log, "load the conversation", err)
	}
	key := ref.startKey()
	for i, e := range path {
		if t.started {
			if startsResponse(e) {
				t.last = false
				break
			}
			t.entries = append(t.entries, e)
			continue
		}
		if e.IdempotencyKey == key {
			t.started, t.start = true, path[i]
		} else if startsResponse(e) {
			t.prev = &path[i]
		}
	}
	if t.last && ex.Status == entrystore.StatusWaiting {
		calls, _, err := cs.ListToolCalls(ctx, ex.OrgID, ex.ID,
			entrystore.ToolCallFilter{Status: entrystore.ToolCallAwaitingApproval}, entrystore.Page{})
		if err != nil {
			return nil, toStatus(s.log, "list tool calls", err)
		}
		t.awaiting = map[string]entrystore.ToolCall{}
		for _, c := range calls {
			t.awaiting[c.ToolCallID] = c
		}
		if t.clientCalls, err = s.waitingCalls(ctx, cs, ex, entrystore.ToolCallAwaitingResult); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// waitingCalls are ex's tool calls in state st, by the model's call ID.
func (s *service) waitingCalls(ctx context.Context, cs conversationStore, ex entrystore.Execution, st string) (map[string]entrystore.ToolCall, error) {
	calls, _, err := cs.ListToolCalls(ctx, ex.OrgID, ex.ID, entrystore.ToolCallFilter{Status: st}, entrystore.Page{})
	if err != nil {
		return nil, toStatus(s.log, "list tool calls", err)
	}
	out := map[string]entrystore.ToolCall{}
	for _, c := range calls {
		out[c.ToolCallID] = c
	}
	return out, nil
}

// status is the response's status in the spec's terms.
func (t *turn) status() string {
	switch {
	case !t.last:
		return "completed"
	case t.ex.Status == entrystore.StatusFailed:
		return "failed"
	case t.ex.Status == entrystore.StatusCancelled || t.ex.Status == entrystore.StatusCancelling:
		return "cancelled"
	case t.ex.Status == entrystore.StatusPaused:
		return "incomplete"
	case !t.started:
		return "queued"
	case t.ex.Status == entrystore.StatusWaiting || t.ex.Status == entrystore.StatusCompleted:
		return "completed"
	}
	return "in_progress"
}

// done reports whether the response has ended.
func (t *turn) done() bool {
	st := t.status()
	return st != "queued" && st != "in_progress"
}

// mcpServerLabel is the server_label of worker tools' items: they run on
// Agentree's workers, as a remote MCP server's tools run on it.
const mcpServerLabel = "agentree"

// messageItemID is the ID of the message item of execution exec's model
// call whose entry (and stream events) carry key, which is unique only
// within its execution: the same whether read from the tree or streamed.
func messageItemID(exec, key string) string {
	h := sha256.Sum256([]byte(exec + "\x00" + key))
	return "msg_" + hex.EncodeToString(h[:16])
}

// output is the response's items, in the tree's order, and its usage.
func (t *turn) output() ([]oaItem, oaUsage) {
	items := []oaItem{}
	cfg := executionConfig(t.ex)
	var u agentsdk.Usage
	results := map[string]agentsdk.Message{}
	for _, e := range t.entries {
		if e.Type == string(agentsdk.EntryMessage) && e.Role == string(agentsdk.RoleToolResult) {
			var m agentsdk.Message
			if json.Unmarshal(e.Content, &m) == nil {
				results[m.ToolCallID] = m
			}
		}
	}
	for _, e := range t.entries {
		if e.Type != string(agentsdk.EntryMessage) || e.Role != string(agentsdk.RoleAssistant) {
			continue
		}
		var m agentsdk.Message
		if json.Unmarshal(e.Content, &m) != nil {
			continue
		}
		if m.Usage != nil {
			u = u.Add(*m.Usage)
		}
		if text := m.Text(); text != "" {
			items = append(items, oaItem{Type: "message", ID: messageItemID(e.ExecutionID, e.IdempotencyKey), Status: "completed",
				Role: "assistant", Content: []oaPart{outputText(text)}})
		}
		for _, c := range m.ToolCalls() {
			args := string(c.Arguments)
			if args == "" {
				args = "{}"
			}
			if cfg.IsClientTool(c.Name) {
				// The client runs it: its output starts the next response.
				items = append(items, oaItem{Type: "function_call", ID: functionCallItemID(c.ID), CallID: c.ID, Name: c.Name,
					Arguments: &args, Status: "completed"})
				continue
			}
			if _, waits := t.awaiting[c.ID]; waits {
				items = append(items, oaItem{Type: "mcp_approval_request", ID: c.ID, Name: c.Name,
					Arguments: &args, ServerLabel: mcpServerLabel})
				continue
			}
			it := oaItem{Type: "mcp_call", ID: c.ID, Name: c.Name, Arguments: &args, ServerLabel: mcpServerLabel,
				Status: "in_progress"}
			if r, ok := results[c.ID]; ok {
				out := r.Text()
				it.Status, it.Output = "completed", &out
				if r.IsError {
					it.Status, it.ItemError = "failed", &out
				}
			}
			items = append(items, it)
		}
	}
	return items, usageOf(u)
}

// functionCallItemID is the item ID of client tool call id's function_call
// item (the spec's items have IDs of their own beside the call's).
func functionCallItemID(id string) string { return "fc_" + id }

// usageOf is a usage in the spec's fields: input tokens count the cached
// ones, as OpenAI's do.
func usageOf(u agentsdk.Usage) oaUsage {
	in := u.Input + u.CacheRead + u.CacheWrite
	return oaUsage{
		InputTokens: in, InputTokensDetails: oaInputDetails{CachedTokens: u.CacheRead},
		OutputTokens: u.Output, TotalTokens: in + u.Output,
	}
}
