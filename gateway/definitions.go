package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// definitionFields are the writable fields create and update share.
type definitionFields interface {
	GetName() string
	GetSlug() string
	GetDescription() string
	GetKind() string
	GetSystemPrompt() string
	GetModels() []*pb.ModelRef
	GetTools() []string
	GetConfig() *pb.ExecutionConfig
	GetMetadata() *structpb.Struct
	GetPersistenceMode() string
	GetExpose() *pb.AgentExposure
}

// definition validates a definition's fields as an execution's would be,
// so a definition that stores fine also starts fine: its kind, tools and
// models must be served by some live worker, on any task queue. With no
// live worker at all only their form is checked, so definitions can be
// written before the workers are deployed.
func (v *validator) definition(ctx context.Context, log *slog.Logger, orgID, id string, f definitionFields) (entrystore.Definition, error) {
	if strings.TrimSpace(f.GetName()) == "" {
		return entrystore.Definition{}, invalid("name is required")
	}
	switch slug := f.GetSlug(); {
	case slug == "":
		return entrystore.Definition{}, invalid("slug is required: 1 to 63 lowercase letters, digits and '-', starting with a letter or digit (e.g. \"research-bot\")")
	case !entrystore.ValidSlug(slug):
		return entrystore.Definition{}, invalid("slug %q is not valid: use 1 to 63 lowercase letters, digits and '-', starting with a letter or digit (e.g. \"research-bot\")", slug)
	}
	kind := f.GetKind()
	if kind == "" {
		kind = entrystore.DefaultKind
	}
	models := fromModelRefs(f.GetModels())
	cfg := agentsdk.Config{SystemPrompt: f.GetSystemPrompt(), Models: models, Tools: f.GetTools()}
	conf, err := fromConfig(f.GetConfig())
	if err != nil {
		return entrystore.Definition{}, invalid("config: %v", err)
	}
	if err := decodeConfig(conf, &cfg, "config"); err != nil {
		return entrystore.Definition{}, err
	}
	if conf, err = topPersistenceMode(f.GetPersistenceMode(), conf, &cfg); err != nil {
		return entrystore.Definition{}, err
	}
	if err := cfg.Validate(nil, nil); err != nil {
		return entrystore.Definition{}, invalid("%v", err)
	}
	// A definition's caps are checked now, so one above the ceiling is
	// refused where it is written rather than at every create.
	if cfg.Budget != nil {
		if _, err := v.ceiling.apply(cfg.Budget, "config.budget"); err != nil {
			return entrystore.Definition{}, err
		}
	}
	err = v.live.check(ctx, func(rows []entrystore.WorkerCapability) error {
		if len(rows) == 0 {
			return nil
		}
		return offers(rows, orgID, "on any task queue", kind, cfg)
	})
	if err != nil {
		return entrystore.Definition{}, capError(log, err)
	}
	meta, err := fromStruct(f.GetMetadata())
	if err != nil {
		return entrystore.Definition{}, invalid("metadata: %v", err)
	}
	if models == nil {
		models = []agentsdk.ModelRef{}
	}
	mj, _ := json.Marshal(models) // plain structs cannot fail
	return entrystore.Definition{
		ID: id, OrgID: orgID, Name: f.GetName(), Slug: f.GetSlug(), Description: f.GetDescription(),
		Kind: kind, SystemPrompt: f.GetSystemPrompt(), Models: mj, Tools: f.GetTools(),
		Config: conf, Metadata: meta, ExposeA2A: f.GetExpose().GetA2A(), ExposeMCP: f.GetExpose().GetMcp(),
	}, nil
}

func (s *service) CreateAgentDefinition(ctx context.Context, req *pb.CreateAgentDefinitionRequest) (*pb.AgentDefinition, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	d, err := s.v.definition(ctx, s.log, org.ID, "", req)
	if err != nil {
		return nil, err
	}
	d, err = s.es.CreateDefinition(ctx, d)
	if err != nil {
		return nil, toStatus(s.log, "create agent definition", err)
	}
	return toDefinition(d), nil
}

func (s *service) ListAgentDefinitions(ctx context.Context, req *pb.ListAgentDefinitionsRequest) (*pb.ListAgentDefinitionsResponse, error) {
	orgID, p, err := s.paged(ctx, req.GetOrg(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	ds, next, err := s.es.ListDefinitions(ctx, orgID, p)
	if err != nil {
		return nil, toStatus(s.log, "list agent definitions", err)
	}
	return &pb.ListAgentDefinitionsResponse{NextCursor: next, AgentDefinitions: each(ds, toDefinition)}, nil
}

func (s *service) GetAgentDefinition(ctx context.Context, req *pb.GetAgentDefinitionRequest) (*pb.AgentDefinition, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	d, err := s.es.GetDefinition(ctx, org.ID, req.GetId())
	if err != nil {
		return nil, s.notFound(err, "agent definition", req.GetId())
	}
	return toDefinition(d), nil
}

func (s *service) UpdateAgentDefinition(ctx context.Context, req *pb.UpdateAgentDefinitionRequest) (*pb.AgentDefinition, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	d, err := s.v.definition(ctx, s.log, org.ID, req.GetId(), req)
	if err != nil {
		return nil, err
	}
	d, err = s.es.UpdateDefinition(ctx, d)
	if err != nil {
		return nil, s.notFound(err, "agent definition", req.GetId())
	}
	return toDefinition(d), nil
}

func (s *service) DeleteAgentDefinition(ctx context.Context, req *pb.DeleteAgentDefinitionRequest) (*pb.DeleteAgentDefinitionResponse, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	if err := s.es.DeleteDefinition(ctx, org.ID, req.GetId()); err != nil {
		return nil, s.notFound(err, "agent definition", req.GetId())
	}
	return &pb.DeleteAgentDefinitionResponse{}, nil
}
