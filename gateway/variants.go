package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Variants, branching in one execution and injections (issue 40). The
// store keeps them (entrystore/variants*.go, injections.go); the model
// calls see them through the context overlay (internal/step/overlay.go);
// here they are checked and served.

// maxInjection bounds an injection's text, in characters.
const maxInjection = 100_000

// variantExecution is the execution named, refused for a worker-held one:
// its tree is not in Postgres, where variants live.
func (s *service) variantExecution(ctx context.Context, org, id string) (entrystore.Execution, error) {
	ex, err := s.execution(ctx, org, id)
	if err == nil && ex.PersistenceMode == entrystore.PersistenceWorkerHeld {
		err = status.Error(codes.FailedPrecondition, "variants, branches and injections need the conversation in the store; this execution's is held by its worker (persistenceMode local)")
	}
	return ex, err
}

// variantStatus maps a variant operation's error: an unknown entry or
// variant is a 404 naming it, a refused move a 409 saying why.
func (s *service) variantStatus(op string, err error) error {
	switch {
	case errors.Is(err, entrystore.ErrNotFound):
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i > 0 {
			msg = strings.TrimPrefix(msg[:i], "entrystore: ")
		}
		if j := strings.Index(msg, ": "); j > 0 {
			msg = msg[j+2:]
		}
		return status.Errorf(codes.NotFound, "%s: not found", msg)
	}
	return toStatus(s.log, op, err)
}

func toVariant(v entrystore.Variant) *pb.Variant {
	out := &pb.Variant{
		Name: v.Name, ExecutionId: v.ExecutionID, LeafEntryId: v.LeafEntryID, ExcludedEntryIds: v.ExcludedEntryIDs,
		Active: v.Active, CreatedAt: ts(v.CreatedAt), UpdatedAt: ts(v.UpdatedAt),
	}
	var m agentsdk.ModelRef
	if len(v.ModelOverride) > 0 && json.Unmarshal(v.ModelOverride, &m) == nil && m.ModelID != "" {
		out.ModelOverride = &pb.ModelRef{Provider: m.Provider, ModelId: m.ModelID, Endpoint: m.Endpoint}
	}
	return out
}

// toVariants converts variants, naming each fork's origin by its name.
func toVariants(vs []entrystore.Variant) []*pb.Variant {
	names := map[string]string{}
	for _, v := range vs {
		names[v.ID] = v.Name
	}
	out := make([]*pb.Variant, len(vs))
	for i, v := range vs {
		out[i] = toVariant(v)
		out[i].ForkedFrom = names[v.ForkedFrom]
	}
	return out
}

// variant re-reads one variant by name, so its fork origin is named.
func (s *service) variant(ctx context.Context, ex entrystore.Execution, name string) (*pb.Variant, error) {
	vs, err := s.es.ListVariants(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return nil, toStatus(s.log, "get variant", err)
	}
	for _, p := range toVariants(vs) {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "variant %q: not found", name)
}

func (s *service) ListVariants(ctx context.Context, req *pb.ListVariantsRequest) (*pb.ListVariantsResponse, error) {
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	vs, err := s.es.ListVariants(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return nil, toStatus(s.log, "list variants", err)
	}
	return &pb.ListVariantsResponse{Variants: toVariants(vs)}, nil
}

func (s *service) GetVariant(ctx context.Context, req *pb.VariantRequest) (*pb.Variant, error) {
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	return s.variant(ctx, ex, req.GetName())
}

func (s *service) CreateVariant(ctx context.Context, req *pb.CreateVariantRequest) (*pb.Variant, error) {
	if req.GetEntryId() == "" {
		return nil, invalid("entryId is required: the entry the variant's path ends at")
	}
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	v, err := s.es.CreateVariant(ctx, ex.OrgID, ex.ID, req.GetName(), req.GetEntryId())
	if errors.Is(err, entrystore.ErrConflict) {
		return nil, status.Errorf(codes.AlreadyExists, "variant %q exists already", req.GetName())
	}
	if err != nil {
		return nil, s.variantStatus("create variant", err)
	}
	return s.variant(ctx, ex, v.Name)
}

func (s *service) ActivateVariant(ctx context.Context, req *pb.VariantRequest) (*pb.Variant, error) {
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	if _, err := s.es.ActivateVariant(ctx, ex.OrgID, ex.ID, req.GetName()); err != nil {
		return nil, s.variantStatus("activate variant", err)
	}
	return s.variant(ctx, ex, req.GetName())
}

func (s *service) PromoteVariant(ctx context.Context, req *pb.VariantRequest) (*pb.Variant, error) {
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	v, err := s.es.PromoteVariant(ctx, ex.OrgID, ex.ID, req.GetName())
	if err != nil {
		return nil, s.variantStatus("promote variant", err)
	}
	return s.variant(ctx, ex, v.Name)
}

func (s *service) SetVariantExclusions(ctx context.Context, req *pb.SetVariantExclusionsRequest) (*pb.VariantEdit, error) {
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	edit, err := s.es.SetExclusions(ctx, ex.OrgID, ex.ID, req.GetName(), req.GetExcludedEntryIds())
	if err != nil {
		return nil, s.variantStatus("set exclusions", err)
	}
	return s.variantEdit(ctx, ex, edit)
}

func (s *service) variantEdit(ctx context.Context, ex entrystore.Execution, edit entrystore.Edit) (*pb.VariantEdit, error) {
	v, err := s.variant(ctx, ex, edit.Variant.Name)
	if err != nil {
		return nil, err
	}
	out := &pb.VariantEdit{Variant: v, Forked: edit.Forked}
	if edit.Entry.ID != "" {
		out.Entry = toEntry(treeEntry{Entry: edit.Entry})
	}
	return out, nil
}

func (s *service) SetVariantModel(ctx context.Context, req *pb.SetVariantModelRequest) (*pb.Variant, error) {
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if m := req.GetModel(); m != nil {
		if m.GetProvider() == "" || m.GetModelId() == "" {
			return nil, invalid("model needs a provider and a modelId (leave model out to clear the override)")
		}
		raw, _ = json.Marshal(agentsdk.ModelRef{Provider: m.GetProvider(), ModelID: m.GetModelId(), Endpoint: m.GetEndpoint()})
	}
	if _, err := s.es.SetModelOverride(ctx, ex.OrgID, ex.ID, req.GetName(), raw); err != nil {
		return nil, s.variantStatus("set variant model", err)
	}
	return s.variant(ctx, ex, req.GetName())
}

// injectionText checks an injection's text.
func injectionText(text string) error {
	switch n := utf8.RuneCountInString(text); {
	case strings.TrimSpace(text) == "":
		return invalid("text is required: what the model is told")
	case n > maxInjection:
		return invalid("text is %d characters, over the %d allowed", n, maxInjection)
	}
	return nil
}

func (s *service) AddInjection(ctx context.Context, req *pb.AddInjectionRequest) (*pb.VariantEdit, error) {
	if err := injectionText(req.GetText()); err != nil {
		return nil, err
	}
	if req.GetParentId() == "" {
		return nil, invalid("parentId is required: the entry the injection follows")
	}
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	edit, err := s.es.AddInjection(ctx, ex.OrgID, ex.ID, req.GetParentId(), req.GetText())
	if err != nil {
		return nil, s.variantStatus("add injection", err)
	}
	return s.variantEdit(ctx, ex, edit)
}

func (s *service) EditInjection(ctx context.Context, req *pb.EditInjectionRequest) (*pb.VariantEdit, error) {
	if err := injectionText(req.GetText()); err != nil {
		return nil, err
	}
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	edit, err := s.es.EditInjection(ctx, ex.OrgID, ex.ID, req.GetEntryId(), req.GetText())
	if err != nil {
		return nil, s.variantStatus("edit injection", err)
	}
	return s.variantEdit(ctx, ex, edit)
}

func (s *service) DeleteInjection(ctx context.Context, req *pb.InjectionRequest) (*pb.VariantEdit, error) {
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	edit, err := s.es.DeleteInjection(ctx, ex.OrgID, ex.ID, req.GetEntryId())
	if err != nil {
		return nil, s.variantStatus("delete injection", err)
	}
	return s.variantEdit(ctx, ex, edit)
}

func (s *service) BranchAgentExecution(ctx context.Context, req *pb.BranchAgentExecutionRequest) (*pb.BranchAgentExecutionResponse, error) {
	if req.GetEntryId() == "" {
		return nil, invalid("entryId is required: the entry to go on from")
	}
	ex, err := s.variantExecution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	if ex.Status != entrystore.StatusWaiting && ex.Status != entrystore.StatusCompleted {
		return nil, status.Errorf(codes.FailedPrecondition, "only a waiting or completed execution can branch; %s is %s", ex.ID, ex.Status)
	}
	to := req.GetEntryId()
	out := &pb.BranchAgentExecutionResponse{}
	if req.GetSummarize() {
		sum, err := s.branchSummary(ctx, ex, to)
		if err != nil {
			return nil, err
		}
		out.Summary, to = toEntry(treeEntry{Entry: sum}), sum.ID
	}
	moved, err := s.es.MoveLeaf(ctx, ex.OrgID, ex.ID, to)
	if err != nil {
		return nil, s.variantStatus("branch", err)
	}
	out.Execution = toExecution(moved)
	return out, nil
}

// overlay is the context overlay of the execution's variant name ("" for
// the active one): none for a worker-held execution, whose tree (and so
// every variant) is not in Postgres. Time travel and the token timeline
// read contexts through it, as the model calls do.
func (s *service) overlay(ctx context.Context, ex entrystore.Execution, name string) (step.Overlay, error) {
	if ex.PersistenceMode == entrystore.PersistenceWorkerHeld {
		return step.Overlay{}, nil
	}
	if name != "" {
		if _, err := s.variant(ctx, ex, name); err != nil {
			return step.Overlay{}, err
		}
	}
	o, err := s.es.ContextOverlay(ctx, ex.OrgID, ex.ID, name)
	if err != nil {
		return step.Overlay{}, toStatus(s.log, "variant overlay", err)
	}
	ov, err := step.OverlayOf(o)
	if err != nil {
		return ov, toStatus(s.log, "variant overlay", err)
	}
	return ov, nil
}
