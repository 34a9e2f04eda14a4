package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// A conversation is an execution's tree. POST /v1/conversations creates
// no row: it returns an ID from which the execution's ID is derived, and
// the first response in it starts that execution. The ID carries its
// creation time (a UUIDv7) and a check bound to the organization, so
// another organization's conversation ID is a 404 like a made-up one, and
// the same ID from two organizations could never name one execution.

const conversationIDPrefix = "conv_"

// conversationMetadataKey keeps a conversation's ID in its execution's
// metadata, so its responses name it; it is not shown as metadata.
const conversationMetadataKey = "openai.conversation"

// conversationCheck binds a conversation's UUID to its organization.
func conversationCheck(org entrystore.Org, id uuid.UUID) string {
	h := sha256.Sum256([]byte("agentree conversation\x00" + org.ID + "\x00" + id.String()))
	return hex.EncodeToString(h[:8])
}

// newConversationID makes a conversation ID for org.
func newConversationID(org entrystore.Org) (string, time.Time, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", time.Time{}, err
	}
	sec, nsec := id.Time().UnixTime()
	return conversationIDPrefix + hex.EncodeToString(id[:]) + conversationCheck(org, id), time.Unix(sec, nsec), nil
}

// conversationExecution reads a conversation ID of org: its execution's
// ID and its creation time; false for an ID that is not one of org's.
func conversationExecution(org entrystore.Org, conv string) (string, time.Time, bool) {
	raw, ok := strings.CutPrefix(conv, conversationIDPrefix)
	if !ok || len(raw) != 48 {
		return "", time.Time{}, false
	}
	b, err := hex.DecodeString(raw[:32])
	if err != nil {
		return "", time.Time{}, false
	}
	id, err := uuid.FromBytes(b)
	if err != nil || id.Version() != 7 || raw[32:] != conversationCheck(org, id) {
		return "", time.Time{}, false
	}
	sec, nsec := id.Time().UnixTime()
	exec := uuid.NewSHA1(uuid.NameSpaceOID, []byte("agentree conversation\x00"+org.ID+"\x00"+id.String()))
	return exec.String(), time.Unix(sec, nsec), true
}

func conversationNotFound(id string) error {
	return status.Errorf(codes.NotFound, "conversation %q not found", id)
}

// conversationOf is the conversation ex was started for, "" for none.
func conversationOf(ex entrystore.Execution) string {
	var m map[string]any
	if json.Unmarshal(ex.Metadata, &m) != nil {
		return ""
	}
	c, _ := m[conversationMetadataKey].(string)
	return c
}

// publicMetadata is an execution's metadata as a response shows it:
// string values only, without the conversation's key; nil for none.
func publicMetadata(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok && k != conversationMetadataKey {
			out[k] = s
		}
	}
	b, _ := json.Marshal(out)
	return b
}

func (s *service) createConversation(w http.ResponseWriter, r *http.Request, org entrystore.Org, _ entrystore.APIKey) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeOAStatus(w, badParam("", "reading the request body failed"))
		return
	}
	var req map[string]json.RawMessage
	if len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			writeOAStatus(w, badParam("", "the request body must be a JSON object"))
			return
		}
	}
	for name, v := range req {
		if string(v) == "null" || string(v) == "[]" || string(v) == "{}" {
			continue
		}
		msg := name + " is not supported: a conversation starts with its first response (POST /v1/responses with conversation)"
		writeOAError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_parameter", name, msg)
		return
	}
	id, at, err := newConversationID(org)
	if err != nil {
		writeOAStatus(w, toStatus(s.log, "create conversation", err))
		return
	}
	writeOAJSON(w, http.StatusOK, oaConversation{ID: id, Object: "conversation", CreatedAt: at.Unix(), Metadata: []byte("{}")})
}

func (s *service) getConversation(w http.ResponseWriter, r *http.Request, org entrystore.Org, _ entrystore.APIKey) {
	c, _, err := s.conversationRow(r, org)
	if err != nil {
		writeOAStatus(w, err)
		return
	}
	writeOAJSON(w, http.StatusOK, c)
}

// conversationRow reads the conversation the path names, and its
// execution (nil before its first response).
func (s *service) conversationRow(r *http.Request, org entrystore.Org) (oaConversation, *entrystore.Execution, error) {
	id := r.PathValue("id")
	execID, at, ok := conversationExecution(org, id)
	if !ok {
		return oaConversation{}, nil, conversationNotFound(id)
	}
	c := oaConversation{ID: id, Object: "conversation", CreatedAt: at.Unix(), Metadata: []byte("{}")}
	ex, err := s.es.GetExecution(r.Context(), org.ID, execID)
	if errors.Is(err, entrystore.ErrNotFound) {
		return c, nil, nil
	}
	if err != nil {
		return c, nil, toStatus(s.log, "get conversation", err)
	}
	if m := publicMetadata(ex.Metadata); m != nil {
		c.Metadata = m
	}
	return c, &ex, nil
}

// defaultItemsLimit and maxItemsLimit are the spec's page sizes.
const (
	defaultItemsLimit = 20
	maxItemsLimit     = 100
)

// listConversationItems lists the messages and tool calls of the
// conversation's active path, newest first unless order=asc.
func (s *service) listConversationItems(w http.ResponseWriter, r *http.Request, org entrystore.Org, _ entrystore.APIKey) {
	q := r.URL.Query()
	for name := range q {
		if name != "limit" && name != "after" && name != "order" {
			writeOAError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_parameter", name, name+" is not supported")
			return
		}
	}
	limit := defaultItemsLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxItemsLimit {
			writeOAStatus(w, badParam("limit", "limit must be a whole number from 1 to 100"))
			return
		}
		limit = n
	}
	order := q.Get("order")
	if order != "" && order != "asc" && order != "desc" {
		writeOAStatus(w, badParam("order", "order must be asc or desc"))
		return
	}
	_, ex, err := s.conversationRow(r, org)
	if err != nil {
		writeOAStatus(w, err)
		return
	}
	items := []oaItem{}
	if ex != nil {
		if items, err = s.conversationItems(r, org, *ex); err != nil {
			writeOAStatus(w, err)
			return
		}
	}
	if order != "asc" {
		slices.Reverse(items)
	}
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(items, func(it oaItem) bool { return it.ID == after })
		if i < 0 {
			writeOAStatus(w, badParam("after", "after %q is not an item of this conversation", after))
			return
		}
		items = items[i+1:]
	}
	page := oaList{Object: "list", Data: items[:min(limit, len(items))], HasMore: len(items) > limit}
	if len(page.Data) > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[len(page.Data)-1].ID
	}
	writeOAJSON(w, http.StatusOK, page)
}

// conversationItems is the active path as items, oldest first: each
// user message, then what its response output.
func (s *service) conversationItems(r *http.Request, org entrystore.Org, ex entrystore.Execution) ([]oaItem, error) {
	if ex.LeafEntryID == "" {
		return nil, nil
	}
	_, cs, err := s.conversation(r.Context(), org.ID, ex.ID)
	if err != nil {
		return nil, err
	}
	path, err := cs.Path(r.Context(), ex.OrgID, ex.LeafEntryID)
	if err != nil {
		return nil, toStatus(s.log, "load the conversation", err)
	}
	var items []oaItem
	var cur *turn
	flush := func() {
		if cur != nil {
			out, _ := cur.output()
			items = append(items, out...)
		}
	}
	for i, e := range path {
		if !startsResponse(e) {
			if cur != nil {
				cur.entries = append(cur.entries, e)
			}
			continue
		}
		flush()
		cur = &turn{ex: ex, started: true, start: path[i]}
		if e.Type != string(agentsdk.EntryMessage) {
			continue
		}
		var m agentsdk.Message
		switch {
		case json.Unmarshal(e.Content, &m) != nil:
		case e.Role == string(agentsdk.RoleToolResult):
			// A client tool call's output, as the client sent it.
			out := m.Text()
			items = append(items, oaItem{Type: "function_call_output", ID: "fco_" + m.ToolCallID, CallID: m.ToolCallID,
				Output: &out, Status: "completed"})
		default:
			items = append(items, oaItem{Type: "message", ID: messageItemID(e.ExecutionID, e.IdempotencyKey), Status: "completed", Role: "user",
				Content: []oaPart{{Type: "input_text", Text: m.Text()}}})
		}
	}
	flush()
	return items, nil
}
