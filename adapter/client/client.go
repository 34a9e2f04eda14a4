package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/wire"
)

// The types that cross the runtime boundary: a segment's input, an
// execution's workflow result and the one signal name.
type (
	SegmentInput = wire.SegmentInput
	Result       = wire.Result
)

// SignalName is the one Temporal signal Agentree sends; it carries only an
// agentsdk.Signal (the inbox row's ID and the signal's name).
const SignalName = wire.SignalName

// Client starts, signals and cancels executions: the store first, then
// Temporal, so nothing the workflow needs is ever only in flight.
type Client struct {
	tc        client.Client
	es        *entrystore.Store
	taskQueue string
}

// NewClient returns a client that starts workflows on taskQueue.
func NewClient(tc client.Client, es *entrystore.Store, taskQueue string) *Client {
	return &Client{tc: tc, es: es, taskQueue: taskQueue}
}

// StartRequest describes a new execution.
type StartRequest struct {
	OrgID string
	// ExecutionID is optional; a new UUID when empty.
	ExecutionID  string
	Kind         string
	DefinitionID string
	ParentID     string
	Config       agentsdk.Config
	UserPrompt   string
	Metadata     json.RawMessage
	// ResumedFrom, ResumeLeafID and StepCount make the execution a resume
	// (see Resume): its first entry continues the tree at ResumeLeafID, an
	// entry of ResumedFrom, and its step count starts at StepCount.
	ResumedFrom, ResumeLeafID string
	StepCount                 int
	// ForkedFrom makes the execution a fork of that one at ResumeLeafID
	// (see Fork).
	ForkedFrom string
	// First, when set, is the first entry in place of a user message
	// made of UserPrompt (a counterfactual branch starts from an answer or
	// a copy of a tool result): under ResumeLeafID, as the message would
	// be.
	First *FirstEntry
	// WithinQuota refuses the start with an *entrystore.QuotaError when the
	// organization has its quota's maxRunning executions not ended
	// (entrystore.CreateExecutionWithinQuota): what the gateway's creates,
	// resumes and forks ask. A sub-agent started by its parent is not
	// refused: its parent is running already.
	WithinQuota bool
}

// startInput is an execution row's input: what its first entry is made
// of, so the reconciler can write it too.
type startInput struct {
	UserPrompt   string      `json:"userPrompt"`
	ResumeLeafID string      `json:"resumeLeafId,omitempty"`
	First        *FirstEntry `json:"first,omitempty"`
}

// FirstEntry is an execution's first entry when it is not a user message
// (StartRequest.First).
type FirstEntry struct {
	Type     string          `json:"type"`
	Role     string          `json:"role,omitempty"`
	Content  json.RawMessage `json:"content"`
	TurnID   string          `json:"turnId,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// StartsFrom reports whether an execution row's input says what its first
// entry is: what the reconciler needs to start it.
func StartsFrom(input json.RawMessage) bool {
	var in startInput
	return json.Unmarshal(input, &in) == nil && (in.UserPrompt != "" || in.First != nil)
}

// Start creates the execution row (PENDING, config frozen), appends the
// first user entry and starts the workflow with ID = execution ID.
func (c *Client) Start(ctx context.Context, req StartRequest) (entrystore.Execution, error) {
	ex, first, err := Prepare(ctx, c.es, req, c.taskQueue)
	if err != nil {
		return ex, err
	}
	_, err = ExecuteWorkflow(ctx, c.tc, StartOptions(ex), req.Kind, first)
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		_, _ = c.es.Transition(context.WithoutCancel(ctx), req.OrgID, ex.ID, entrystore.Transition{To: entrystore.StatusFailed, Error: "start workflow: " + err.Error()})
	}
	if err != nil {
		// Temporal out of reach (or ctx ended): the execution stays
		// PENDING and a worker's Reconciler starts it once it can.
		return ex, fmt.Errorf("client: start workflow: %w", err)
	}
	return ex, nil
}

// Prepare writes what an execution starts from: its row (on queue) and
// first user entry, and returns its first segment's input. With
// req.ExecutionID set it is repeat-safe: a retry finds the row and the
// entry it wrote before. Start uses it; so does a workflow that starts an
// agent as its child (adapter.StartChildAgent).
func Prepare(ctx context.Context, es *entrystore.Store, req StartRequest, queue string) (entrystore.Execution, SegmentInput, error) {
	if strings.TrimSpace(req.UserPrompt) == "" && req.First == nil {
		return entrystore.Execution{}, SegmentInput{}, fmt.Errorf("%w: userPrompt is empty", agentsdk.ErrInvalidInput)
	}
	if req.Kind == "" {
		return entrystore.Execution{}, SegmentInput{}, fmt.Errorf("%w: kind is empty", agentsdk.ErrInvalidInput)
	}
	cfg, err := json.Marshal(req.Config)
	if err != nil {
		return entrystore.Execution{}, SegmentInput{}, fmt.Errorf("client: start: %w", err)
	}
	input, _ := json.Marshal(startInput{UserPrompt: req.UserPrompt, ResumeLeafID: req.ResumeLeafID, First: req.First})
	forkedFromEntry := ""
	if req.ForkedFrom != "" {
		forkedFromEntry = req.ResumeLeafID
	}
	create := es.CreateExecution
	if req.WithinQuota {
		create = es.CreateExecutionWithinQuota
	}
	ex, err := create(ctx, entrystore.Execution{
		ID: req.ExecutionID, OrgID: req.OrgID, Kind: req.Kind, DefinitionID: req.DefinitionID,
		ParentID: req.ParentID, Config: cfg, Input: input, Queue: queue, Metadata: req.Metadata,
		ResumedFrom: req.ResumedFrom, StepCount: req.StepCount,
		ForkedFrom: req.ForkedFrom, ForkedFromEntry: forkedFromEntry,
		Traceparent: traceparent(ctx),
	})
	if errors.Is(err, entrystore.ErrConflict) && req.ExecutionID != "" {
		ex, err = es.GetExecution(ctx, req.OrgID, req.ExecutionID)
	}
	if err != nil {
		return entrystore.Execution{}, SegmentInput{}, fmt.Errorf("client: start: %w", err)
	}
	first, err := FirstSegment(ctx, es, ex, req.UserPrompt)
	return ex, first, err
}

// FirstSegment appends an execution's first user entry — once: its key
// makes a repeat (a retried start, the reconciler) return the same entry —
// and returns the input of the execution's first segment. A resume's
// entry continues the tree at the leaf its input names.
func FirstSegment(ctx context.Context, es *entrystore.Store, ex entrystore.Execution, prompt string) (SegmentInput, error) {
	var cfg agentsdk.Config
	_ = json.Unmarshal(ex.Config, &cfg)
	if cfg.WorkerHeld() {
		// Its conversation lives on a worker: the worker that takes it
		// appends the first entry (from the row's input) to its store.
		return SegmentInput{ExecutionID: ex.ID, OrgID: ex.OrgID, Local: true, ShortKeys: true}, nil
	}
	msg := agentsdk.TextMessage(agentsdk.RoleUser, prompt)
	content, _ := json.Marshal(msg)
	var in startInput
	_ = json.Unmarshal(ex.Input, &in)
	entry := entrystore.Entry{
		OrgID: ex.OrgID, ExecutionID: ex.ID, ParentID: in.ResumeLeafID, Type: string(agentsdk.EntryMessage), Role: string(agentsdk.RoleUser),
		Content: content, IdempotencyKey: entrystore.InputKey(ex.ID),
	}
	if f := in.First; f != nil {
		entry.Type, entry.Role, entry.Content, entry.TurnID, entry.Metadata = f.Type, f.Role, f.Content, f.TurnID, f.Metadata
	}
	first, _, err := es.AppendEntry(ctx, entry)
	if err != nil {
		return SegmentInput{}, fmt.Errorf("client: start: first entry: %w", err)
	}
	// A resume counts its steps on from the run's total (and its budget
	// from there).
	st := agentsdk.State{Steps: ex.StepCount, StepBase: ex.StepCount}
	return SegmentInput{ExecutionID: ex.ID, OrgID: ex.OrgID, LeafID: first.ID, State: st, ShortKeys: true}, nil
}

// StartOptions are the workflow options of an execution: its ID is the
// execution ID, its task queue the row's, and it carries the execution's
// search attributes. They make a second start of an execution harmless: a
// running workflow of that ID is used as it is (the SDK returns its
// handle), and an ended one is never started again. Its runs continue as
// new with the same workflow task timeout: half the server's default, so a
// workflow task held by a worker that died is handed to another within 5 s
// (a segment's long local activities keep their task alive by heartbeat).
func StartOptions(ex entrystore.Execution) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       ex.ID,
		TaskQueue:                ex.Queue,
		TypedSearchAttributes:    SearchAttributes(ex),
		WorkflowTaskTimeout:      WorkflowTaskTimeout,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
}

// WorkflowTaskTimeout is every execution's workflow task timeout.
const WorkflowTaskTimeout = 5 * time.Second

// ErrTerminal is returned for a signal to an execution that has ended.
var ErrTerminal = errors.New("execution has ended")

// Signal writes the signal's value to the inbox, then sends the Temporal
// signal with only its ID and name.
func (c *Client) Signal(ctx context.Context, orgID, executionID, name string, value json.RawMessage) (entrystore.Signal, error) {
	return c.SignalOnce(ctx, "", orgID, executionID, name, value)
}

// SignalOnce is Signal with the inbox row's ID chosen by the caller (a
// keyed request's effect ID; "" makes one), so it is repeat-safe: a repeat
// finds the row the first call stored and returns it, sending the Temporal
// signal again only if the row is not yet consumed (the workflow ignores
// a second delivery of one signal).
func (c *Client) SignalOnce(ctx context.Context, id, orgID, executionID, name string, value json.RawMessage) (entrystore.Signal, error) {
	// A first delivery to a live execution is stored in one round trip
	// (a message's turn starts sooner); a repeat, an ended execution, an
	// unknown or malformed one is read and answered below.
	s, traceparent, stored, err := c.es.PutNewSignal(ctx, entrystore.Signal{ID: id, OrgID: orgID, ExecutionID: executionID, Name: name, Value: value})
	if err != nil && !errors.Is(err, entrystore.ErrInvalid) {
		return s, fmt.Errorf("client: signal: %w", err)
	}
	if stored {
		return s, c.notify(ctx, entrystore.Execution{ID: executionID, OrgID: orgID, Traceparent: traceparent}, s)
	}
	ex, err := c.es.GetExecution(ctx, orgID, executionID)
	if err != nil {
		return entrystore.Signal{}, err
	}
	if id != "" {
		s, err := c.es.GetSignal(ctx, orgID, id)
		switch {
		case err == nil && s.Consumed:
			return s, nil
		case err == nil:
			return s, c.notify(ctx, ex, s)
		case !errors.Is(err, entrystore.ErrNotFound):
			return s, fmt.Errorf("client: signal: %w", err)
		}
	}
	if ex.Status.Terminal() || ex.Status == entrystore.StatusCancelling {
		return entrystore.Signal{}, fmt.Errorf("client: signal %s: %w (%s)", executionID, ErrTerminal, ex.Status)
	}
	s, err = c.es.PutSignal(ctx, entrystore.Signal{ID: id, OrgID: orgID, ExecutionID: executionID, Name: name, Value: value})
	if errors.Is(err, entrystore.ErrExecutionEnded) {
		// It ended between the check above and the store: refused before
		// it was stored, so nothing acknowledged is dropped.
		return s, fmt.Errorf("client: signal %s: %w", executionID, ErrTerminal)
	}
	if err != nil {
		return s, fmt.Errorf("client: signal: %w", err)
	}
	return s, c.notify(ctx, ex, s)
}

// notify sends the Temporal signal of a stored inbox row.
func (c *Client) notify(ctx context.Context, ex entrystore.Execution, s entrystore.Signal) error {
	err := c.tc.SignalWorkflow(inExecutionTrace(ctx, ex), ex.ID, "", SignalName, agentsdk.Signal{ID: s.ID, Name: s.Name})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("client: signal %s: %w", ex.ID, ErrTerminal)
	}
	if err != nil {
		return fmt.Errorf("client: signal: %w", err)
	}
	return nil
}

// Cancel marks the execution CANCELLING and asks Temporal to cancel it; the
// workflow records CANCELLED once its running tool has stopped.
func (c *Client) Cancel(ctx context.Context, orgID, executionID string) (entrystore.Execution, error) {
	ex, err := c.es.Transition(ctx, orgID, executionID, entrystore.Transition{To: entrystore.StatusCancelling})
	if err != nil {
		return ex, fmt.Errorf("client: cancel: %w", err)
	}
	if err := c.tc.CancelWorkflow(inExecutionTrace(ctx, ex), executionID, ""); err != nil {
		var nf *serviceerror.NotFound
		if !errors.As(err, &nf) {
			return ex, fmt.Errorf("client: cancel: %w", err)
		}
	}
	return ex, nil
}

// Wait blocks until the execution's workflow ends (following its
// continue-as-new chain) and returns its result.
func (c *Client) Wait(ctx context.Context, executionID string) (Result, error) {
	var res Result
	err := c.tc.GetWorkflow(ctx, executionID, "").Get(ctx, &res)
	return res, err
}
