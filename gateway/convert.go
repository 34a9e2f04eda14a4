package gateway

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// each converts every item of a list.
func each[S, P any](items []S, conv func(S) P) []P {
	out := make([]P, len(items))
	for i, it := range items {
		out[i] = conv(it)
	}
	return out
}

// toStruct converts a stored JSON object; anything else (no value, null,
// a non-object a bug elsewhere wrote) is nil rather than an error, so one
// odd row cannot make a whole list fail.
func toStruct(raw json.RawMessage) *structpb.Struct {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(raw, s); err != nil {
		return nil
	}
	return s
}

// toValue converts any stored JSON value.
func toValue(raw json.RawMessage) *structpb.Value {
	if len(raw) == 0 {
		return nil
	}
	v := &structpb.Value{}
	if err := protojson.Unmarshal(raw, v); err != nil {
		return nil
	}
	return v
}

// toConfig converts a stored configuration; keys the message does not know
// (a row written by an older build) are dropped, and a row that does not
// decode at all is nil, as toStruct's are.
func toConfig(raw json.RawMessage) *pb.ExecutionConfig {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	c := &pb.ExecutionConfig{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, c); err != nil {
		return nil
	}
	return c
}

// fromConfig is the JSON of a request's configuration, in the JSON names
// agentsdk.Config decodes; nil stays nil. Unset fields are left out, so
// they keep what the configuration they override has.
func fromConfig(c *pb.ExecutionConfig) (json.RawMessage, error) {
	if c == nil {
		return nil, nil
	}
	raw, err := protojson.Marshal(c)
	if err != nil {
		return nil, err
	}
	// protojson quotes 64-bit integers (config.budget.maxTokens), which
	// agentsdk.Config reads as numbers.
	return int64sAsNumbers(raw, c.ProtoReflect().Descriptor())
}

// fromStruct is the JSON of a request's free-form object; nil stays nil.
func fromStruct(s *structpb.Struct) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	return protojson.Marshal(s)
}

// n32 is a small count for a response (a step number, a depth, a
// checkpoint's sequence), a 32-bit field of the API. Counts that can grow
// past its range (tokens, sizes, durations, seq) are 64-bit fields, which
// the gateway writes as JSON numbers (numbers.go). Past its range it is
// clamped rather than wrapped.
func n32[T ~int | ~int64](v T) int32 {
	return int32(max(min(int64(v), math.MaxInt32), math.MinInt32))
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func tsPtr(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return ts(*t)
}

func toDefinition(d entrystore.Definition) *pb.AgentDefinition {
	var models []agentsdk.ModelRef
	_ = json.Unmarshal(d.Models, &models)
	return &pb.AgentDefinition{
		Id: d.ID, OrgId: d.OrgID, Name: d.Name, Slug: d.Slug, Description: d.Description, Kind: d.Kind,
		SystemPrompt: d.SystemPrompt, Models: toModelRefs(models), Tools: d.Tools,
		Config: toConfig(d.Config), Metadata: toStruct(d.Metadata),
		CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt), PersistenceMode: persistenceMode(d.Config),
		Expose: &pb.AgentExposure{A2A: d.ExposeA2A, Mcp: d.ExposeMCP},
	}
}

func toModelRefs(ms []agentsdk.ModelRef) []*pb.ModelRef {
	out := make([]*pb.ModelRef, len(ms))
	for i, m := range ms {
		out[i] = &pb.ModelRef{Provider: m.Provider, ModelId: m.ModelID, Endpoint: m.Endpoint}
	}
	return out
}

func fromModelRefs(ms []*pb.ModelRef) []agentsdk.ModelRef {
	if len(ms) == 0 {
		return nil
	}
	out := make([]agentsdk.ModelRef, len(ms))
	for i, m := range ms {
		out[i] = agentsdk.ModelRef{Provider: m.GetProvider(), ModelID: m.GetModelId(), Endpoint: m.GetEndpoint()}
	}
	return out
}

func toExecution(e entrystore.Execution) *pb.AgentExecution {
	var cfg struct {
		MaxSteps       int32 `json:"maxSteps"`
		Counterfactual struct {
			Of string `json:"of"`
		} `json:"counterfactual"`
	}
	_ = json.Unmarshal(e.Config, &cfg)
	var out struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(e.Output, &out)
	return &pb.AgentExecution{
		Id: e.ID, OrgId: e.OrgID, AgentDefinitionId: e.DefinitionID, ParentId: e.ParentID,
		ResumedFrom: e.ResumedFrom, Kind: e.Kind, Status: string(e.Status),
		Config: toConfig(e.Config), Input: toStruct(e.Input), Output: toStruct(e.Output),
		Error: e.Error, StopReason: e.StopReason, CurrentCheckpointSeq: int32(e.CheckpointSeq),
		StepCount: int32(e.StepCount), Metadata: toStruct(e.Metadata),
		CreatedAt: ts(e.CreatedAt), UpdatedAt: ts(e.UpdatedAt),
		StartedAt: tsPtr(e.StartedAt), CompletedAt: tsPtr(e.CompletedAt),
		ForkedFrom: e.ForkedFrom, ForkedFromEntry: e.ForkedFromEntry, LocalWorker: e.Holder, LeafEntryId: e.LeafEntryID,
		PersistenceMode: e.PersistenceMode,
		Summary:         summary(out.Text), ErrorMessage: e.Error, MaxSteps: cfg.MaxSteps, DurationMs: durationMs(e, time.Now()),
		CounterfactualOf: cfg.Counterfactual.Of,
	}
}

// maxSummary bounds a summary, in characters.
const maxSummary = 200

// summary is an answer's first non-empty line, cut to maxSummary
// characters.
func summary(text string) string {
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > maxSummary {
				return string(r[:maxSummary-1]) + "…"
			}
			return line
		}
	}
	return ""
}

// durationMs is how long the execution ran: start to end, or to now while
// it runs; 0 before it starts.
func durationMs(e entrystore.Execution, now time.Time) int64 {
	if e.StartedAt == nil {
		return 0
	}
	end := now
	if e.CompletedAt != nil {
		end = *e.CompletedAt
	}
	return max(0, end.Sub(*e.StartedAt).Milliseconds())
}

func toEntry(t treeEntry) *pb.Entry {
	e := t.Entry
	// A served llm_call entry holds its record already and adds nothing
	// to a model's context.
	tokens, meta := 0, e.Metadata
	if !t.call {
		tokens, meta = entryTokens(e), llmCallMetadata(e)
	}
	return &pb.Entry{
		Id: e.ID, ExecutionId: e.ExecutionID, ParentId: e.ParentID, Seq: int64(t.apiSeq()), Depth: n32(e.Depth),
		Type: e.Type, Role: e.Role, Content: toValue(e.Content), TurnId: e.TurnID,
		Metadata: toStruct(meta), CreatedAt: ts(e.CreatedAt), StepNumber: n32(e.Step),
		Tokens: int64(tokens),
	}
}

// toMessage converts a message entry; ok is false for other entries.
func toMessage(e entrystore.Entry) (*pb.Message, bool) {
	if e.Type != string(agentsdk.EntryMessage) {
		return nil, false
	}
	var m agentsdk.Message
	if err := json.Unmarshal(e.Content, &m); err != nil {
		return nil, false
	}
	out := &pb.Message{
		EntryId: e.ID, ParentId: e.ParentID, Role: string(m.Role), ToolCallId: m.ToolCallID,
		ToolName: m.ToolName, IsError: m.IsError, Provider: m.Provider, Model: m.Model,
		StopReason: string(m.StopReason), CreatedAt: ts(e.CreatedAt),
		StepNumber: n32(e.Step), TurnId: e.TurnID,
	}
	if m.Role == agentsdk.RoleAssistant {
		out.TaskExecutionId = e.IdempotencyKey
	}
	if u := m.Usage; u != nil {
		out.Usage = &pb.Usage{Input: int64(u.Input), Output: int64(u.Output), CacheRead: int64(u.CacheRead), CacheWrite: int64(u.CacheWrite), Unpriced: u.Unpriced}
		if !u.Unpriced {
			out.Usage.Cost = &u.Cost
		}
	}
	out.Content = each(m.Content, toBlock)
	return out, true
}

func toBlock(b agentsdk.Block) *pb.ContentBlock {
	out := &pb.ContentBlock{Type: string(b.Type), Text: b.Text, Thinking: b.Thinking}
	if img := b.Image; img != nil {
		out.MediaType, out.Data, out.Url = img.MediaType, img.Data, img.URL
	}
	if tc := b.ToolCall; tc != nil {
		out.ToolCall = &pb.ToolCallRequest{Id: tc.ID, Name: tc.Name, Arguments: toValue(tc.Arguments)}
	}
	return out
}
