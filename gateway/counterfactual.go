package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Counterfactuals (seed 004 §3) are forks whose first entry is the
// alternative: a user message in place of the entry (message), a copy of
// the entry's parent so the model writes the answer again (model), or the
// answer with one tool call replaced (action). The branch's configuration
// names the original (agentsdk.Config.Counterfactual), which the tool step
// reads to answer recorded calls from the record and to hold new
// side-effecting calls for approval.

// The changes a counterfactual makes.
const (
	changeMessage = "message"
	changeModel   = "model"
	changeAction  = "action"
)

// CreateCounterfactual starts a counterfactual branch of an execution.
func (s *service) CreateCounterfactual(ctx context.Context, req *pb.CreateCounterfactualRequest) (*pb.Counterfactual, error) {
	change, err := counterfactualChange(req)
	if err != nil {
		return nil, err
	}
	if req.GetEntryId() == "" {
		return nil, invalid("entryId is required: the entry the alternative replaces")
	}
	ex, err := s.continued(ctx, req.GetOrg(), req.GetId(), "branched")
	if err != nil {
		return nil, err
	}
	path, err := s.es.Path(ctx, ex.OrgID, ex.LeafEntryID)
	if err != nil && !errors.Is(err, entrystore.ErrNotFound) {
		return nil, toStatus(s.log, "counterfactual: path", err)
	}
	i := slices.IndexFunc(path, func(e entrystore.Entry) bool { return e.ID == req.GetEntryId() })
	if i < 0 {
		return nil, s.notFound(entrystore.ErrNotFound, "entry", req.GetEntryId())
	}
	var cfg agentsdk.Config
	if err := json.Unmarshal(ex.Config, &cfg); err != nil {
		return nil, toStatus(s.log, "counterfactual: config", err)
	}
	cfg.Counterfactual = &agentsdk.Counterfactual{Of: ex.ID, Leaf: ex.LeafEntryID, Entry: path[i].ID}
	sr := aclient.StartRequest{
		OrgID: ex.OrgID, Kind: ex.Kind, DefinitionID: ex.DefinitionID, Metadata: ex.Metadata,
		ForkedFrom: ex.ID, ExecutionID: effectID(ctx), WithinQuota: true,
	}
	if err := s.alternative(ctx, change, req, ex, path, i, &cfg, &sr); err != nil {
		return nil, err
	}
	sr.Config = cfg
	if err := s.withinBudget(ctx, ex.OrgID); err != nil {
		return nil, err
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	out, err := s.ex.Start(cctx, sr)
	if err != nil {
		return nil, toStatus(s.log, "start counterfactual", err)
	}
	// The row as it is now, its first entry appended.
	if now, err := s.es.GetExecution(ctx, out.OrgID, out.ID); err == nil {
		out = now
	}
	return s.counterfactual(ctx, ex, out)
}

// counterfactualChange is the one alternative the request gives.
func counterfactualChange(req *pb.CreateCounterfactualRequest) (string, error) {
	var given []string
	if strings.TrimSpace(req.GetUserMessage()) != "" {
		given = append(given, changeMessage)
	}
	if req.GetModel() != nil {
		given = append(given, changeModel)
	}
	if req.GetAction() != nil {
		given = append(given, changeAction)
	}
	if len(given) != 1 {
		return "", invalid("give exactly one alternative: userMessage, model or action; got %d", len(given))
	}
	return given[0], nil
}

// alternative fills in the branch's first entry (or prompt), its parent
// and step count, and the configuration change, for one change at
// path[i].
func (s *service) alternative(ctx context.Context, change string, req *pb.CreateCounterfactualRequest, ex entrystore.Execution,
	path []entrystore.Entry, i int, cfg *agentsdk.Config, sr *aclient.StartRequest) error {
	e := path[i]
	parent := func(j int) string {
		if j < 0 {
			return ""
		}
		return path[j].ID
	}
	isMessage := func(e entrystore.Entry, roles ...agentsdk.Role) bool {
		return e.Type == string(agentsdk.EntryMessage) && slices.Contains(roles, agentsdk.Role(e.Role))
	}
	switch change {
	case changeMessage:
		if !isMessage(e, agentsdk.RoleUser) {
			return invalid("entry %s is not a user message: a different userMessage replaces one", e.ID)
		}
		sr.UserPrompt, sr.ResumeLeafID, sr.StepCount = req.GetUserMessage(), parent(i-1), e.Step
		return nil
	case changeModel:
		if !isMessage(e, agentsdk.RoleAssistant) || i == 0 || !isMessage(path[i-1], agentsdk.RoleUser, agentsdk.RoleToolResult) {
			return invalid("entry %s is not an answer to a user message or a tool result: a different model writes such an answer again", e.ID)
		}
		// The model reads the same conversation: the answer's parent,
		// copied under its own parent, is the branch's first entry.
		p := path[i-1]
		sr.First = &aclient.FirstEntry{Type: p.Type, Role: p.Role, Content: p.Content, TurnID: p.TurnID}
		sr.ResumeLeafID, sr.StepCount = parent(i-2), p.Step
		m := req.GetModel()
		cfg.Models = []agentsdk.ModelRef{{Provider: m.GetProvider(), ModelID: m.GetModelId(), Endpoint: m.GetEndpoint()}}
		if err := cfg.Validate(nil, nil); err != nil {
			return invalid("%s", strings.TrimPrefix(err.Error(), "invalid input: "))
		}
		err := s.v.live.check(ctx, func(rows []entrystore.WorkerCapability) error {
			if len(rows) == 0 {
				return nil
			}
			return offers(rows, ex.OrgID, "on any task queue", "", *cfg)
		})
		if err != nil {
			return capError(s.log, err)
		}
		return nil
	}
	return s.replacedAction(ctx, req.GetAction(), cfg.Tools, path, i, sr)
}

// replacedAction makes the branch's first entry the answer at path[i] with
// one tool call replaced, its policies those of a counterfactual.
func (s *service) replacedAction(ctx context.Context, a *pb.CounterfactualAction, tools []string,
	path []entrystore.Entry, i int, sr *aclient.StartRequest) error {
	e := step.SDKEntry(path[i])
	msg, err := e.Message()
	if err != nil || e.Type != agentsdk.EntryMessage || e.Role != agentsdk.RoleAssistant || len(msg.ToolCalls()) == 0 {
		return invalid("entry %s is not an answer that calls tools: a different action replaces one of its tool calls", e.ID)
	}
	args, err := fromStruct(a.GetArguments())
	if err != nil || len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	target := a.GetToolCallId()
	replaced := false
	for j, b := range msg.Content {
		tc := b.ToolCall
		if tc == nil || (target != "" && tc.ID != target) || replaced {
			continue
		}
		name := tc.Name
		if a.GetToolName() != "" {
			name = a.GetToolName()
		}
		if !slices.Contains(tools, name) {
			return invalid("action.toolName %q is not one of the execution's tools %q", name, tools)
		}
		c := *tc
		c.Name, c.Arguments = name, args
		msg.Content[j].ToolCall = &c
		replaced = true
	}
	if !replaced {
		return invalid("entry %s has no tool call %q", e.ID, target)
	}
	readOnly, err := s.readOnlyTools(ctx)
	if err != nil {
		return err
	}
	meta := step.AnswerMetaOf(e)
	// Not a model call of the branch's: its usage is the original's.
	meta.Call = nil
	msg.Usage = nil
	meta = step.CounterfactualMeta(meta, msg, step.RecordedIn(sdkEntries(path)), func(name string) bool { return readOnly[name] })
	content, _ := json.Marshal(msg)
	metadata, _ := json.Marshal(meta)
	sr.First = &aclient.FirstEntry{Type: string(agentsdk.EntryMessage), Role: string(agentsdk.RoleAssistant),
		Content: content, TurnID: e.TurnID, Metadata: metadata}
	sr.ResumeLeafID = ""
	if i > 0 {
		sr.ResumeLeafID = path[i-1].ID
	}
	sr.StepCount = path[i].Step
	return nil
}

// readOnlyTools are the tools every live worker that serves them marks
// read-only.
func (s *service) readOnlyTools(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.v.live.check(ctx, func(rows []entrystore.WorkerCapability) error {
		not := map[string]bool{}
		for _, r := range rows {
			for _, t := range r.Tools {
				if t.ReadOnly && !not[t.Name] {
					out[t.Name] = true
				} else {
					not[t.Name], out[t.Name] = true, false
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, capError(s.log, err)
	}
	return out, nil
}

func sdkEntries(path []entrystore.Entry) []agentsdk.Entry {
	out := make([]agentsdk.Entry, len(path))
	for i, e := range path {
		out[i] = step.SDKEntry(e)
	}
	return out
}
