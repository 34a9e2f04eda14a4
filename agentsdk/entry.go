package agentsdk

import "encoding/json"

// EntryType names a kind of conversation-tree entry.
type EntryType string

// The entry types. Message entries are sent to models, and so are a
// branch's summary and an operator's injection (Entry.InContext).
const (
	EntryMessage       EntryType = "message"
	EntryLLMCall       EntryType = "llm_call"
	EntryCompaction    EntryType = "compaction"
	EntryBranchSummary EntryType = "branch_summary"
	EntryAgentSpawn    EntryType = "agent_spawn"
	EntryAgentResult   EntryType = "agent_result"
	// EntryApproval records a person's approval of a tool call, between
	// the call and its result.
	EntryApproval EntryType = "approval"
	// EntryIgnoredSignal records a signal consumed without effect (a
	// toolResult for no call waiting for one); the model never sees it.
	EntryIgnoredSignal EntryType = "ignored_signal"
	// EntryInjection is an operator's context (issue 40), beside the
	// path under the entry it follows: editable and deletable, unlike a
	// message, so it is joined to a context by the variant's overlay
	// rather than by being on the path.
	EntryInjection EntryType = "injection"
)

// InContext reports whether the entry is one a model sees as a message:
// a message, a branch's summary (a user message saying what a path not
// taken did) or an injection (a user message from the operator).
func (e Entry) InContext() bool {
	return e.Type == EntryMessage || e.Type == EntryBranchSummary || e.Type == EntryInjection
}

// Entry is one node of an execution's conversation tree.
type Entry struct {
	ID          string          `json:"id"`
	ParentID    string          `json:"parentId,omitempty"`
	ExecutionID string          `json:"executionId"`
	Type        EntryType       `json:"type"`
	Role        Role            `json:"role,omitempty"`
	Content     json.RawMessage `json:"content"`
	TurnID      string          `json:"turnId,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	// IdempotencyKey makes an append repeat-safe: appending a key that
	// exists returns the existing entry and writes nothing.
	IdempotencyKey string `json:"-"`
	// Depth is the entry's distance from the root: its index in any path
	// through it. Set by the store.
	Depth int `json:"-"`
}

// Message decodes a message entry's content.
func (e Entry) Message() (Message, error) {
	var m Message
	err := json.Unmarshal(e.Content, &m)
	return m, err
}

// NewEntry is an entry to append. The runtime fills in the parent (the
// current leaf) and the idempotency key.
type NewEntry struct {
	Type     EntryType
	Message  *Message        // for message entries
	Content  json.RawMessage // for other types
	TurnID   string
	Metadata json.RawMessage
}

// EntryRef is what workflow code knows about an entry: enough to decide the
// next step, never the content itself, so history stays small.
type EntryRef struct {
	ID        string        `json:"id"`
	Type      EntryType     `json:"type"`
	Role      Role          `json:"role,omitempty"`
	ToolCalls []ToolCallRef `json:"toolCalls,omitempty"`
	// Answered is, for an assistant entry, how many of its tool calls
	// already have results on the path; the runtime fills it in.
	StopReason StopReason `json:"stopReason,omitempty"`
	IsError    bool       `json:"isError,omitempty"`
	// Preview is the start of the entry's text, at most PreviewBytes.
	Preview string `json:"preview,omitempty"`
}

// ToolCallRef names a tool call without its arguments. Digest is a hash of
// name and arguments, for loop detection.
type ToolCallRef struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Digest string `json:"digest,omitempty"`
	// Policy is the call's tool policy, resolved when the model answered
	// (empty: auto, as for answers recorded before policies).
	Policy ToolPolicy `json:"policy,omitempty"`
	// Local runs the call's first attempt as a local activity: its tool
	// was not LongRunning when the model answered (not stored with the
	// answer: an answer read back from the store runs its calls as
	// activities).
	Local bool `json:"local,omitempty"`
	// Client: the call is to a client tool (Config.ClientTools), answered
	// by the client's toolResult signal, never run by a worker; resolved
	// when the model answered.
	Client bool `json:"client,omitempty"`
}

// PreviewBytes bounds EntryRef.Preview and other previews carried through
// workflow history.
const PreviewBytes = 256

// Preview cuts s to at most PreviewBytes on a rune boundary.
func Preview(s string) string {
	if len(s) <= PreviewBytes {
		return s
	}
	cut := PreviewBytes
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
