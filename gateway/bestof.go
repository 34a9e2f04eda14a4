package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Best-of-N runs N forks of an execution from one of its entries at once,
// each its own execution (so each history stays as small as one run's),
// and on promotion copies the kept fork's own entries under that entry in
// the execution and moves its leaf there (entrystore.PromoteBestOf): the
// execution's next message continues from the kept answer in the
// execution's own tree. Forks rather than children of the execution's
// tree because the execution's workflow appends only under its own
// entries (entrystore's append rule), and N workflows appending to one
// execution would race its leaf.

// CreateBestOf starts N branches from an entry.
func (s *service) CreateBestOf(ctx context.Context, req *pb.CreateBestOfRequest) (*pb.BestOf, error) {
	n := int(req.GetN())
	if n == 0 {
		n = s.maxBestOf
	}
	if n < 2 || n > s.maxBestOf {
		return nil, invalid("n must be from 2 to %d; got %d", s.maxBestOf, n)
	}
	if len(req.GetBranches()) > n {
		return nil, invalid("branches has %d overrides for %d branches", len(req.GetBranches()), n)
	}
	ex, err := s.continued(ctx, req.GetOrg(), req.GetId(), "branched")
	if err != nil {
		return nil, err
	}
	path, err := s.es.Path(ctx, ex.OrgID, ex.LeafEntryID)
	if err != nil && !errors.Is(err, entrystore.ErrNotFound) {
		return nil, toStatus(s.log, "best-of: path", err)
	}
	entryID := req.GetEntryId()
	if entryID == "" {
		entryID = ex.LeafEntryID
	}
	i := slices.IndexFunc(path, func(e entrystore.Entry) bool { return e.ID == entryID })
	if i < 0 {
		return nil, s.notFound(entrystore.ErrNotFound, "entry", entryID)
	}
	var cfg agentsdk.Config
	if err := json.Unmarshal(ex.Config, &cfg); err != nil {
		return nil, toStatus(s.log, "best-of: config", err)
	}
	base := aclient.StartRequest{OrgID: ex.OrgID, Kind: ex.Kind, DefinitionID: ex.DefinitionID, Metadata: ex.Metadata,
		ForkedFrom: ex.ID, WithinQuota: true}
	if err := bestOfStart(req, path, i, &base); err != nil {
		return nil, err
	}
	cfgs := make([]agentsdk.Config, n)
	for k := range cfgs {
		cfgs[k] = cfg
		if k < len(req.GetBranches()) && req.GetBranches()[k].GetModel() != nil {
			if err := s.overrideModel(ctx, ex, &cfgs[k], req.GetBranches()[k].GetModel(), "branches["+strconv.Itoa(k)+"].model"); err != nil {
				return nil, err
			}
		}
	}
	if err := s.withinBudget(ctx, ex.OrgID); err != nil {
		return nil, err
	}
	// A retried request (same Idempotency-Key) names the same best-of and
	// the same forks, which start once.
	key := effectID(ctx)
	if key == "" {
		key = uuid.NewString()
	}
	id := uuid.NewSHA1(uuid.NameSpaceOID, []byte("bestof/"+ex.ID+"/"+key)).String()
	cctx, cancel := committed(ctx)
	defer cancel()
	b := entrystore.BestOf{ID: id, OrgID: ex.OrgID, ExecutionID: ex.ID, EntryID: entryID}
	for k := range n {
		sr := base
		sr.Config = cfgs[k]
		sr.ExecutionID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(id+"/"+strconv.Itoa(k))).String()
		out, err := s.ex.Start(cctx, sr)
		if err != nil {
			return nil, toStatus(s.log, "start best-of branch", err)
		}
		b.BranchIDs = append(b.BranchIDs, out.ID)
	}
	if b, err = s.es.CreateBestOf(cctx, b); err != nil {
		return nil, toStatus(s.log, "create best-of", err)
	}
	return s.bestOf(ctx, ex, b, nil)
}

// bestOfStart fills in a branch's first entry: a user message or tool
// result at path[i] is copied under its parent so each branch answers it
// again; after an answer, userMessage is each branch's message under it.
func bestOfStart(req *pb.CreateBestOfRequest, path []entrystore.Entry, i int, sr *aclient.StartRequest) error {
	e := path[i]
	msg := strings.TrimSpace(req.GetUserMessage())
	if msg != "" {
		sr.UserPrompt, sr.ResumeLeafID, sr.StepCount = req.GetUserMessage(), e.ID, e.Step
		return nil
	}
	if e.Type != string(agentsdk.EntryMessage) || (e.Role != string(agentsdk.RoleUser) && e.Role != string(agentsdk.RoleToolResult)) {
		return invalid("entry %s is not a user message or a tool result for the branches to answer: give userMessage to start them after it", e.ID)
	}
	sr.First = &aclient.FirstEntry{Type: e.Type, Role: e.Role, Content: e.Content, TurnID: e.TurnID}
	sr.ResumeLeafID, sr.StepCount = e.ParentID, e.Step
	return nil
}

// overrideModel makes m the only model of cfg, checked as a create's: a
// valid configuration some live worker serves.
func (s *service) overrideModel(ctx context.Context, ex entrystore.Execution, cfg *agentsdk.Config, m *pb.ModelRef, field string) error {
	cfg.Models = []agentsdk.ModelRef{{Provider: m.GetProvider(), ModelID: m.GetModelId(), Endpoint: m.GetEndpoint()}}
	if err := cfg.Validate(nil, nil); err != nil {
		return invalid("%s: %s", field, strings.TrimPrefix(err.Error(), "invalid input: "))
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

// GetBestOf compares a best-of's branches.
func (s *service) GetBestOf(ctx context.Context, req *pb.GetBestOfRequest) (*pb.BestOf, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	b, err := s.es.GetBestOf(ctx, ex.OrgID, ex.ID, req.GetBestOfId())
	if err != nil {
		return nil, s.notFound(err, "best-of", req.GetBestOfId())
	}
	return s.bestOf(ctx, ex, b, nil)
}

// PromoteBestOf keeps one branch.
func (s *service) PromoteBestOf(ctx context.Context, req *pb.PromoteBestOfRequest) (*pb.BestOf, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	b, err := s.es.GetBestOf(ctx, ex.OrgID, ex.ID, req.GetBestOfId())
	if err != nil {
		return nil, s.notFound(err, "best-of", req.GetBestOfId())
	}
	if !slices.Contains(b.BranchIDs, req.GetBranchId()) {
		return nil, s.notFound(entrystore.ErrNotFound, "branch", req.GetBranchId())
	}
	br, err := s.es.GetExecution(ctx, ex.OrgID, req.GetBranchId())
	if err != nil {
		return nil, s.notFound(err, "branch", req.GetBranchId())
	}
	if br.Status != entrystore.StatusWaiting && br.Status != entrystore.StatusCompleted {
		return nil, status.Errorf(codes.FailedPrecondition, "branch %s is %s: only a branch that answered (WAITING or COMPLETED) is promoted", br.ID, br.Status)
	}
	full, err := s.es.Path(ctx, ex.OrgID, br.LeafEntryID)
	if err != nil {
		return nil, toStatus(s.log, "best-of: branch path", err)
	}
	// The branch's own entries; a copy of the entry itself (the branches
	// answered it again) is the entry already.
	own := slices.DeleteFunc(full, func(e entrystore.Entry) bool { return e.ExecutionID != br.ID })
	if len(own) > 0 && own[0].ParentID != b.EntryID {
		own = own[1:]
	}
	if b.PromotedID != "" && b.PromotedID != br.ID {
		return nil, status.Errorf(codes.Aborted, "branch %s of this best-of is promoted already", b.PromotedID)
	}
	// Summaries first: each is appended under the entry, which moves the
	// execution's leaf to it; the promotion then moves the leaf to the kept
	// path's end, last.
	var summaries map[string]string
	if req.GetSummarize() {
		if summaries, err = s.summariseBranches(ctx, ex, b, br.ID); err != nil {
			return nil, err
		}
	}
	b, err = s.es.PromoteBestOf(ctx, ex.OrgID, ex.ID, b.ID, br.ID, b.EntryID, own)
	switch {
	case errors.Is(err, entrystore.ErrNotBranchable), errors.Is(err, entrystore.ErrPromoted):
		return nil, status.Error(codes.Aborted, strings.TrimPrefix(err.Error(), "entrystore: promote best-of: "))
	case err != nil:
		return nil, s.variantStatus("promote best-of", err)
	}
	return s.bestOf(ctx, ex, b, summaries)
}

// summariseBranches has the execution's model write a branch_summary of
// each branch not kept, under the best-of's entry (branchSummary's one
// durable model call each, keyed by the best-of and branch so a retry
// writes none twice).
func (s *service) summariseBranches(ctx context.Context, ex entrystore.Execution, b entrystore.BestOf, kept string) (map[string]string, error) {
	var cfg agentsdk.Config
	if err := json.Unmarshal(ex.Config, &cfg); err != nil || len(cfg.Models) == 0 {
		return nil, status.Error(codes.FailedPrecondition, "the execution names no model to write the summaries")
	}
	out := map[string]string{}
	for _, id := range b.BranchIDs {
		if id == kept {
			continue
		}
		br, err := s.es.GetExecution(ctx, ex.OrgID, id)
		if err != nil || br.LeafEntryID == "" {
			continue
		}
		sid, err := s.ex.SummariseBranch(ctx, ex, aclient.BranchSummaryInput{
			OrgID: ex.OrgID, ExecutionID: ex.ID, EntryID: b.EntryID, AbandonedLeafID: br.LeafEntryID, Model: cfg.Models[0],
			Key: "bestof/" + b.ID + "/" + id,
		})
		if err != nil {
			s.log.Warn("gateway: best-of summary", "execution", ex.ID, "branch", id, "err", err)
			return nil, status.Error(codes.Unavailable, "a branch summary could not be written; promote again with summarize to retry")
		}
		out[id] = sid
	}
	return out, nil
}

// bestOf lays the branches side by side: each one's own path (from the
// entry) summed as a counterfactual's side is.
func (s *service) bestOf(ctx context.Context, ex entrystore.Execution, b entrystore.BestOf, summaries map[string]string) (*pb.BestOf, error) {
	out := &pb.BestOf{Id: b.ID, ExecutionId: ex.ID, EntryId: b.EntryID, PromotedId: b.PromotedID, PromotedLeafId: b.PromotedLeafID}
	for _, id := range b.BranchIDs {
		br, err := s.es.GetExecution(ctx, ex.OrgID, id)
		if err != nil {
			return nil, toStatus(s.log, "best-of: branch", err)
		}
		p, err := s.path(ctx, br)
		if err != nil {
			return nil, err
		}
		own := slices.DeleteFunc(p, func(e agentsdk.Entry) bool { return e.ExecutionID != br.ID })
		side, err := s.sidePath(ctx, br, own, nil)
		if err != nil {
			return nil, err
		}
		out.Branches = append(out.Branches, &pb.BestOfBranch{Path: side, Promoted: id == b.PromotedID, SummaryEntryId: summaries[id]})
	}
	return out, nil
}
