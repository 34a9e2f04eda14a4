package gateway

import (
	"encoding/json"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// validator checks requests against what the workers know, so a typo is a
// 400 now rather than a failed execution later.
type validator struct {
	kinds     []string
	providers agentsdk.Providers // nil = not checked
	tools     agentsdk.Tools     // nil = not checked
	signals   []string
}

func newValidator(o *Options) *validator {
	v := &validator{kinds: o.Kinds, signals: o.Signals}
	// Config.Validate only asks whether a name is known, so the maps need
	// no implementations: the gateway never runs a model or a tool.
	if o.Providers != nil {
		v.providers = agentsdk.Providers{}
		for _, p := range o.Providers {
			v.providers[p] = nil
		}
	}
	if o.Tools != nil {
		v.tools = agentsdk.Tools{}
		for _, t := range o.Tools {
			v.tools[t] = nil
		}
	}
	return v
}

// startRequest builds an execution's frozen configuration: the definition's
// (def may be nil), then the request's config object, then its top-level
// fields, and validates the result.
func (v *validator) startRequest(orgID string, req *pb.CreateAgentExecutionRequest, def *entrystore.Definition) (adapter.StartRequest, error) {
	if strings.TrimSpace(req.GetUserPrompt()) == "" {
		return adapter.StartRequest{}, invalid("userPrompt is required")
	}
	var cfg agentsdk.Config
	kind := req.GetKind()
	if def != nil {
		cfg.SystemPrompt, cfg.Tools = def.SystemPrompt, slices.Clone(def.Tools)
		if len(def.Models) > 0 {
			if err := json.Unmarshal(def.Models, &cfg.Models); err != nil {
				return adapter.StartRequest{}, invalid("agent definition %s: models: %v", def.ID, err)
			}
		}
		if err := decodeConfig(def.Config, &cfg, "agent definition "+def.ID+": config"); err != nil {
			return adapter.StartRequest{}, err
		}
		if kind == "" {
			kind = def.Kind
		}
	}
	over, err := fromStruct(req.GetConfig())
	if err != nil {
		return adapter.StartRequest{}, invalid("config: %v", err)
	}
	if err := decodeConfig(over, &cfg, "config"); err != nil {
		return adapter.StartRequest{}, err
	}
	if p := req.GetSystemPrompt(); p != "" {
		cfg.SystemPrompt = p
	}
	if ms := fromModelRefs(req.GetModels()); len(ms) > 0 {
		cfg.Models = ms
	}
	if ts := req.GetTools(); len(ts) > 0 {
		cfg.Tools = slices.Clone(ts)
	}
	if kind == "" {
		kind = entrystore.DefaultKind
	}
	if !slices.Contains(v.kinds, kind) {
		return adapter.StartRequest{}, invalid("unknown agent kind %q (known: %s)", kind, strings.Join(v.kinds, ", "))
	}
	if len(cfg.Models) == 0 {
		return adapter.StartRequest{}, invalid("models: at least one model is required")
	}
	if err := cfg.Validate(v.providers, v.tools); err != nil {
		return adapter.StartRequest{}, invalid("%v", err)
	}
	meta, err := fromStruct(req.GetMetadata())
	if err != nil {
		return adapter.StartRequest{}, invalid("metadata: %v", err)
	}
	return adapter.StartRequest{
		OrgID: orgID, Kind: kind, DefinitionID: req.GetAgentDefinitionId(), ParentID: req.GetParentId(),
		Config: cfg, UserPrompt: req.GetUserPrompt(), Metadata: meta,
	}, nil
}

// signalValue checks a signal's name and value and returns the value's
// JSON.
func (v *validator) signalValue(req *pb.SignalAgentExecutionRequest) (json.RawMessage, error) {
	name := req.GetSignalName()
	if !slices.Contains(v.signals, name) {
		return nil, invalid("unknown signalName %q (known: %s)", name, strings.Join(v.signals, ", "))
	}
	var raw json.RawMessage
	if val := req.GetSignalValue(); val != nil {
		b, err := protojson.Marshal(val)
		if err != nil {
			return nil, invalid("signalValue: %v", err)
		}
		raw = b
	}
	if name == agentsdk.SignalUserMessage {
		var m agentsdk.UserMessage
		if err := decodeStrict(raw, &m); err != nil {
			return nil, invalid(`signalValue of userMessage must be {"text": "..."}: %s`, decodeProblem(err, "signalValue", &m))
		}
		if strings.TrimSpace(m.Text) == "" {
			return nil, invalid("signalValue.text is required")
		}
	}
	return raw, nil
}
