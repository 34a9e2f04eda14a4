package gateway

import (
	"encoding/json"
	"strconv"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
)

// Every model call has an llm_call entry in the API (seed 000: model,
// tokens, cost, latency and stop reason per call), but an answering call's
// record is stored in the assistant entry it wrote (metadata.llmCall,
// migration 0015: one row per call, not two). The gateway serves that
// record as an entry of its own, built here on every read, so a client
// cannot tell it from a stored one:
//
//   - its ID is the answer's ID with the UUID version nibble flipped
//     (llmCallMask: a version-4 ID becomes a version-8 one, RFC 9562's
//     vendor-specific version), so it is stable and a GET by it finds the
//     answer again without a lookup table;
//   - its parent is the answer (the record hangs off the path, a leaf, so
//     paths, leaves and message lists are what they were), in the answer's
//     turn, at its step, one deeper;
//   - in arrival order it comes right after the answer (apiSeq);
//   - its metadata is the seed's record (llmCallRecord) and its content
//     {}, as a compaction's stored llm_call entry has.
//
// A compaction's summary call keeps its stored llm_call entry, whose
// metadata is served in the same shape.

// llmCallMask turns an answer's entry ID into its llm_call entry's and
// back: XOR on the UUID's version nibble (the 15th character of its text).
const llmCallMask = 0xC

// flipLLMCallID is the llm_call entry ID of the answer id, or the answer ID
// of the llm_call entry id; false for an ID that is not a UUID's text.
func flipLLMCallID(id string) (string, bool) {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return "", false
	}
	v, err := strconv.ParseUint(id[14:15], 16, 8)
	if err != nil {
		return "", false
	}
	return id[:14] + strconv.FormatUint(v^llmCallMask, 16) + id[15:], true
}

// treeEntry is an entry as the API serves it: a stored one, or the
// llm_call entry served for an answer (call).
type treeEntry struct {
	entrystore.Entry
	call bool
}

// apiSeq is an entry's arrival order in the API: a stored entry's seq
// doubled, and its llm_call entry's one more, so the record comes right
// after its answer and before anything appended later.
func (t treeEntry) apiSeq() int64 {
	if t.call {
		return 2*t.Seq + 1
	}
	return 2 * t.Seq
}

// withCalls is es as the API serves them: each answer followed by its
// model call's llm_call entry.
func withCalls(es []entrystore.Entry) []treeEntry {
	out := make([]treeEntry, 0, len(es))
	for _, e := range es {
		out = append(out, treeEntry{Entry: e})
		if c, ok := llmCallEntry(e); ok {
			out = append(out, c)
		}
	}
	return out
}

// llmCallEntry is the llm_call entry served for an answer that holds its
// call's record; false for any other entry.
func llmCallEntry(e entrystore.Entry) (treeEntry, bool) {
	if e.Type != string(agentsdk.EntryMessage) || e.Role != string(agentsdk.RoleAssistant) {
		return treeEntry{}, false
	}
	meta, ok, err := step.CallOf(step.SDKEntry(e))
	if !ok || err != nil {
		return treeEntry{}, false
	}
	id, ok := flipLLMCallID(e.ID)
	if !ok {
		return treeEntry{}, false
	}
	c := e
	c.ID, c.ParentID, c.Depth = id, e.ID, e.Depth+1
	c.Type, c.Role, c.IdempotencyKey = string(agentsdk.EntryLLMCall), "", ""
	c.Content = json.RawMessage(`{}`)
	c.Metadata = llmCallRecord(meta)
	return treeEntry{Entry: c, call: true}, true
}

// callCostOf is a call's cost in USD: its record's, else its usage's.
func callCostOf(m step.LLMCallMeta) float64 {
	if m.Cost != 0 {
		return m.Cost
	}
	return m.Usage.Cost
}

// llmCallMetadata is a stored llm_call entry's metadata in the seed's
// shape; other entries' as stored.
func llmCallMetadata(e entrystore.Entry) json.RawMessage {
	if e.Type != string(agentsdk.EntryLLMCall) {
		return e.Metadata
	}
	meta, _, err := step.CallOf(step.SDKEntry(e))
	if err != nil {
		return e.Metadata
	}
	return llmCallRecord(meta)
}

// callRecord is seed 000's llm_call metadata, with what this runtime
// records besides (why earlier models did not answer, the tools offered
// when not the configuration's, a compaction's purpose).
type callRecord struct {
	Model          agentsdk.ModelRef   `json:"model"`
	Usage          callUsage           `json:"usage"`
	Cost           callCost            `json:"cost"`
	LatencyMs      int64               `json:"latencyMs"`
	StopReason     agentsdk.StopReason `json:"stopReason"`
	FallbackReason string              `json:"fallbackReason,omitempty"`
	Tools          []string            `json:"tools,omitzero"`
	Purpose        string              `json:"purpose,omitempty"`
	FirstKeptDepth int                 `json:"firstKeptDepth,omitempty"`
	// Downgraded ("budget") and DowngradedFrom: the call went to a
	// cheaper model than the one asked for.
	Downgraded     string             `json:"downgraded,omitempty"`
	DowngradedFrom *agentsdk.ModelRef `json:"downgradedFrom,omitempty"`
}

// callUsage is a call's tokens, named as seed 000 names them.
type callUsage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
}

// callCost is a call's cost in USD: its input's (cache reads and writes
// included), its output's and their sum. A call recorded before the
// output's part was kept (agentsdk.Usage.OutputCost) counts all as input.
type callCost struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	Total  float64 `json:"total"`
}

func llmCallRecord(m step.LLMCallMeta) json.RawMessage {
	u := m.Usage
	total := callCostOf(m)
	out, _ := json.Marshal(callRecord{
		Model:     m.Model,
		Usage:     callUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, TotalTokens: u.Total()},
		Cost:      callCost{Input: total - u.OutputCost, Output: u.OutputCost, Total: total},
		LatencyMs: m.LatencyMs, StopReason: m.StopReason, FallbackReason: m.FallbackReason,
		Tools: m.Tools, Purpose: m.Purpose, FirstKeptDepth: m.FirstKeptDepth,
		Downgraded: m.Downgraded, DowngradedFrom: m.DowngradedFrom,
	})
	return out
}
