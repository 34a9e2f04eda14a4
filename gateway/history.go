package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// The history endpoints read an execution's record. Each checks the
// execution first, so another organization's ID is a 404 rather than an
// empty list.

// scoped authorizes a request about one execution and checks its paging.
// It returns the store that holds the execution's conversation.
func (s *service) scoped(ctx context.Context, org, execID string, size int32, cursor string) (string, conversationStore, entrystore.Page, error) {
	ex, cs, err := s.conversation(ctx, org, execID)
	if err != nil {
		return "", nil, entrystore.Page{}, err
	}
	p, err := s.page(size, cursor)
	return ex.OrgID, cs, p, err
}

func (s *service) ListCheckpoints(ctx context.Context, req *pb.ListCheckpointsRequest) (*pb.ListCheckpointsResponse, error) {
	orgID, cs, p, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	cps, next, err := cs.ListCheckpoints(ctx, orgID, req.GetExecutionId(), p)
	if err != nil {
		return nil, toStatus(s.log, "list checkpoints", err)
	}
	return &pb.ListCheckpointsResponse{NextCursor: next, Checkpoints: each(cps, toCheckpoint)}, nil
}

func (s *service) GetCheckpoint(ctx context.Context, req *pb.GetCheckpointRequest) (*pb.Checkpoint, error) {
	orgID, cs, _, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), 0, "")
	if err != nil {
		return nil, err
	}
	c, err := cs.GetCheckpoint(ctx, orgID, req.GetExecutionId(), int(req.GetSequence()))
	if err != nil {
		return nil, s.notFound(err, "checkpoint", fmt.Sprintf("%s/%d", req.GetExecutionId(), req.GetSequence()))
	}
	return toCheckpoint(c), nil
}

func (s *service) GetLatestCheckpoint(ctx context.Context, req *pb.GetLatestCheckpointRequest) (*pb.Checkpoint, error) {
	orgID, cs, _, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), 0, "")
	if err != nil {
		return nil, err
	}
	c, err := cs.LatestCheckpoint(ctx, orgID, req.GetExecutionId())
	if err != nil {
		if errors.Is(err, entrystore.ErrNotFound) {
			return nil, status.Errorf(codes.NotFound, "agent execution %q has no checkpoint yet", req.GetExecutionId())
		}
		return nil, toStatus(s.log, "get the latest checkpoint", err)
	}
	return toCheckpoint(c), nil
}

func (s *service) ListTasks(ctx context.Context, req *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	orgID, cs, p, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	calls, next, err := cs.ListToolCalls(ctx, orgID, req.GetExecutionId(), entrystore.ToolCallFilter{}, p)
	if err != nil {
		return nil, toStatus(s.log, "list tasks", err)
	}
	return &pb.ListTasksResponse{NextCursor: next, Tasks: each(calls, toTask)}, nil
}

// ListEntries pages through the execution's entries in arrival order, an
// answer's llm_call entry right after it (llmcall.go). A page is filled
// from as many store pages as it takes; its cursor names the store page
// and how many of its entries were served.
func (s *service) ListEntries(ctx context.Context, req *pb.ListEntriesRequest) (*pb.ListEntriesResponse, error) {
	orgID, cs, p, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	cur, err := decodeCursor(p.Cursor, entryCursor{}, entryCursor.valid)
	if err != nil {
		return nil, err
	}
	limit := min(cmp.Or(p.Limit, entrystore.DefaultPageLimit), entrystore.MaxPageLimit)
	budget := s.newPageBudget()
	var out []*pb.Entry
	for {
		es, next, err := cs.ListEntries(ctx, orgID, req.GetExecutionId(), entrystore.Page{Limit: limit, Cursor: cur.Store, Bytes: budget.storeBytes()})
		if err != nil {
			return nil, toStatus(s.log, "list entries", err)
		}
		items := withCalls(es)
		for i := cur.Skip; i < len(items); i++ {
			e := toEntry(items[i])
			if len(out) == limit || !budget.take(e) {
				return &pb.ListEntriesResponse{Entries: out, NextCursor: encodeCursor(entryCursor{Store: cur.Store, Skip: i})}, nil
			}
			out = append(out, e)
		}
		if next == "" {
			return &pb.ListEntriesResponse{Entries: out}, nil
		}
		cur = entryCursor{Store: next}
	}
}

// entryCursor is a position in ListEntries: the store's cursor of the page
// being served and how many of that page's entries (llm_call entries
// included) were served already.
type entryCursor struct {
	Store string `json:"c,omitempty"`
	Skip  int    `json:"s,omitempty"`
}

func (c entryCursor) valid() bool { return c.Skip >= 0 }

// GetEntry returns a stored entry, or the llm_call entry served for an
// answer (its ID is the answer's, flipped: flipLLMCallID).
func (s *service) GetEntry(ctx context.Context, req *pb.GetEntryRequest) (*pb.Entry, error) {
	orgID, cs, _, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), 0, "")
	if err != nil {
		return nil, err
	}
	e, err := s.treeEntry(ctx, cs, orgID, req.GetExecutionId(), req.GetEntryId())
	if err != nil {
		return nil, err
	}
	return toEntry(e), nil
}

// treeEntry finds an entry of the execution by its ID in the API: a stored
// one, or an answer's llm_call entry.
func (s *service) treeEntry(ctx context.Context, cs conversationStore, orgID, execID, id string) (treeEntry, error) {
	e, err := cs.GetEntry(ctx, orgID, id)
	if errors.Is(err, entrystore.ErrNotFound) {
		if answer, ok := flipLLMCallID(id); ok {
			if a, aerr := cs.GetEntry(ctx, orgID, answer); aerr == nil && a.ExecutionID == execID {
				if c, ok := llmCallEntry(a); ok {
					return c, nil
				}
			}
		}
	}
	if err == nil && e.ExecutionID != execID {
		err = entrystore.ErrNotFound
	}
	if err != nil {
		return treeEntry{}, s.notFound(err, "entry", id)
	}
	return treeEntry{Entry: e}, nil
}

func (s *service) ListToolCalls(ctx context.Context, req *pb.ListToolCallsRequest) (*pb.ListToolCallsResponse, error) {
	orgID, cs, p, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	switch req.GetStatus() {
	case "", entrystore.ToolCallRunning, entrystore.ToolCallCompleted, entrystore.ToolCallError, entrystore.ToolCallCancelled,
		entrystore.ToolCallAwaitingApproval, entrystore.ToolCallRejected, entrystore.ToolCallAwaitingResult:
	default:
		return nil, invalid("status %q is not running, completed, error, cancelled, awaiting_approval, rejected or awaiting_result", req.GetStatus())
	}
	f := entrystore.ToolCallFilter{ToolName: req.GetToolName(), Status: req.GetStatus()}
	calls, next, err := cs.ListToolCalls(ctx, orgID, req.GetExecutionId(), f, p)
	if err != nil {
		return nil, toStatus(s.log, "list tool calls", err)
	}
	return &pb.ListToolCallsResponse{NextCursor: next, ToolCalls: each(calls, toToolCall)}, nil
}

func (s *service) GetToolCall(ctx context.Context, req *pb.GetToolCallRequest) (*pb.ToolCall, error) {
	orgID, cs, _, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), 0, "")
	if err != nil {
		return nil, err
	}
	c, err := s.findToolCall(ctx, cs, orgID, req.GetExecutionId(), req.GetToolCallId())
	if err != nil {
		return nil, err
	}
	if c.Truncated && c.OutputSHA256 != "" {
		c.Output = s.wholeOutput(ctx, cs, orgID, c)
	}
	return toToolCall(c), nil
}

// wholeOutput puts the full text the content store kept in place of the
// cut one the model saw; on any failure the record's output stands.
func (s *service) wholeOutput(ctx context.Context, cs conversationStore, orgID string, c entrystore.ToolCall) json.RawMessage {
	full, _, err := cs.GetContent(ctx, orgID, c.OutputSHA256)
	if err != nil {
		s.log.Warn("gateway: tool call output", "toolCall", c.ID, "err", err)
		return c.Output
	}
	var out map[string]any
	if json.Unmarshal(c.Output, &out) != nil || out == nil {
		out = map[string]any{}
	}
	out["text"] = string(full)
	b, err := json.Marshal(out)
	if err != nil {
		return c.Output
	}
	return b
}

func toCheckpoint(c entrystore.Checkpoint) *pb.Checkpoint {
	meta := c.Metadata
	if len(meta) == 0 || string(meta) == "null" {
		// A turn's checkpoint stores no reason (engine.Ops.Checkpoint);
		// read from a worker's store, none arrives as null.
		meta = json.RawMessage(`{"reason":"turn"}`)
	}
	return &pb.Checkpoint{
		Id: c.ID, ExecutionId: c.ExecutionID, Sequence: int32(c.Sequence), LeafEntryId: c.LeafEntryID,
		State: toStruct(checkpointState(c.State)), Metadata: toStruct(meta), CreatedAt: ts(c.CreatedAt),
	}
}

func toToolCall(c entrystore.ToolCall) *pb.ToolCall {
	return &pb.ToolCall{
		Id: c.ID, ExecutionId: c.ExecutionID, MessageId: c.MessageID, ResultEntryId: c.ResultEntryID,
		ToolCallId: c.ToolCallID, ToolName: c.ToolName, Status: c.Status,
		Input: toValue(c.Input), Output: toValue(c.Output), OutputSize: int64(c.OutputSize), Truncated: c.Truncated,
		DurationMs: int64(c.DurationMs), StepNumber: n32(c.StepNumber), CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt),
		Policy: c.Policy, Approval: toApproval(c),
	}
}

// toApproval is a call's approval part; nil for a call never asked about.
func toApproval(c entrystore.ToolCall) *pb.ToolApproval {
	if c.ApprovalRequestedAt == nil && c.Decision == "" {
		return nil
	}
	a := &pb.ToolApproval{Risk: c.Risk, Decision: c.Decision, Reason: c.DecisionReason, DecidedBy: c.DecidedBy, Always: c.AlwaysAllow,
		StandingApprovalId: c.StandingApprovalID}
	if len(c.EditedArguments) > 0 {
		a.EditedArguments = toValue(c.EditedArguments)
	}
	if c.ApprovalRequestedAt != nil {
		a.RequestedAt = ts(*c.ApprovalRequestedAt)
	}
	if c.DecidedAt != nil {
		a.DecidedAt = ts(*c.DecidedAt)
	}
	return a
}

// toTask shows a tool call as a task, with seed 000's task statuses.
func toTask(c entrystore.ToolCall) *pb.Task {
	st := strings.ToUpper(c.Status)
	if c.Status == entrystore.ToolCallError {
		st = "FAILED"
	}
	return &pb.Task{
		Id: c.ID, ExecutionId: c.ExecutionID, Kind: c.ToolName, Status: st, ToolCallId: c.ToolCallID,
		StepNumber: n32(c.StepNumber), DurationMs: int64(c.DurationMs), CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt),
	}
}
