package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// validator checks requests against what the live workers serve, so a
// typo is a 400 now, and a queue no worker polls a 503, rather than a
// failed or forever-pending execution later.
type validator struct {
	live    *liveWorkers
	queue   string
	signals []string
	// ceiling bounds every budget a request sets.
	ceiling BudgetCeiling
}

func newValidator(o *Options) *validator {
	return &validator{
		live:    &liveWorkers{es: o.Store, ttl: o.CapabilityCacheTTL, namespace: o.Namespace},
		queue:   o.TaskQueue,
		signals: o.Signals,
		ceiling: o.BudgetCeiling,
	}
}

// startRequest builds an execution's frozen configuration: the definition's
// (def may be nil), then the request's config object, then its top-level
// fields, and validates the result.
func (v *validator) startRequest(ctx context.Context, log *slog.Logger, orgID string, req *pb.CreateAgentExecutionRequest, def *entrystore.Definition) (client.StartRequest, error) {
	if strings.TrimSpace(req.GetUserPrompt()) == "" {
		return client.StartRequest{}, invalid("userPrompt is required")
	}
	var cfg agentsdk.Config
	kind := req.GetKind()
	if def != nil {
		cfg.SystemPrompt, cfg.Tools = def.SystemPrompt, slices.Clone(def.Tools)
		if len(def.Models) > 0 {
			if err := json.Unmarshal(def.Models, &cfg.Models); err != nil {
				return client.StartRequest{}, invalid("agent definition %s: models: %v", def.ID, err)
			}
		}
		if err := decodeConfig(def.Config, &cfg, "agent definition "+def.ID+": config"); err != nil {
			return client.StartRequest{}, err
		}
		if kind == "" {
			kind = def.Kind
		}
	}
	over, err := fromConfig(req.GetConfig())
	if err != nil {
		return client.StartRequest{}, invalid("config: %v", err)
	}
	if err := decodeConfig(over, &cfg, "config"); err != nil {
		return client.StartRequest{}, err
	}
	if _, err := topPersistenceMode(req.GetPersistenceMode(), over, &cfg); err != nil {
		return client.StartRequest{}, err
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
	if len(cfg.Models) == 0 {
		return client.StartRequest{}, invalid("models: at least one model is required")
	}
	if err := cfg.Validate(nil, nil); err != nil {
		return client.StartRequest{}, invalid("%v", err)
	}
	if cfg.Budget, err = v.ceiling.apply(cfg.Budget, "config.budget"); err != nil {
		return client.StartRequest{}, err
	}
	err = v.live.check(ctx, func(rows []entrystore.WorkerCapability) error { return served(rows, orgID, v.queue, kind, cfg) })
	if err != nil {
		return client.StartRequest{}, capError(log, err)
	}
	meta, err := fromStruct(req.GetMetadata())
	if err != nil {
		return client.StartRequest{}, invalid("metadata: %v", err)
	}
	return client.StartRequest{
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

// capError passes a validation verdict through and maps a failure to read
// the capabilities as any store error.
func capError(log *slog.Logger, err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return toStatus(log, "list worker capabilities", err)
}
