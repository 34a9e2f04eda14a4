package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// ErrNotPaused: only a PAUSED execution can be resumed. It is an
// entrystore.ErrConflict.
var ErrNotPaused = fmt.Errorf("%w: only paused runs can be resumed", entrystore.ErrConflict)

// ErrStepLimit: a resume would take the run past its total step limit. It
// is an entrystore.ErrConflict.
var ErrStepLimit = fmt.Errorf("%w: the run has reached its total step limit", entrystore.ErrConflict)

// ErrResumed: the execution was resumed already (each is resumed once; resume
// the newest). It is an entrystore.ErrConflict.
var ErrResumed = fmt.Errorf("%w: the run was resumed already", entrystore.ErrConflict)

// DefaultContinue is a resume's user message when none is given.
const DefaultContinue = "Continue from where you left off."

// ResumeRequest resumes a paused execution.
type ResumeRequest struct {
	OrgID, ExecutionID string
	// NewID is the resumed execution's ID; "" makes one. Set, the resume
	// is repeat-safe: a repeat finds the execution the first call made.
	NewID string
	// MaxSteps is the new session's step budget; 0 keeps the paused
	// execution's.
	MaxSteps int
	// Message is the user message the resume starts with; "" is
	// DefaultContinue.
	Message string
	// MaxTotalSteps bounds the run's steps across resumes; 0 is
	// agentsdk.MaxTotalSteps.
	MaxTotalSteps int
	// Budget, when set, replaces the paused execution's config.budget
	// (a raised cap); the resumed execution starts from the paused one's
	// spend either way.
	Budget *agentsdk.Budget
}

// Resume starts a new execution that continues a PAUSED one: the same
// kind, definition, parent and configuration (maxSteps overridden), its
// first entry — the continue message — under the paused leaf (the tree is
// shared by reference, nothing copied), resumed_from set, and its step
// count starting at the paused run's total, so the next step is total + 1.
// The session's budget is fresh, cut to what is left of MaxTotalSteps; a
// run with nothing left is refused (ErrStepLimit), as is an execution that
// is not PAUSED (ErrNotPaused) or was resumed before (ErrResumed). A
// resume counts against the organization's maxRunning quota
// (StartRequest.WithinQuota); its daily budgets are the gateway's to
// check first, as a resume past them would only pause again.
func (c *Client) Resume(ctx context.Context, req ResumeRequest) (entrystore.Execution, error) {
	limit := req.MaxTotalSteps
	if limit <= 0 {
		limit = agentsdk.MaxTotalSteps
	}
	ex, err := c.es.GetExecution(ctx, req.OrgID, req.ExecutionID)
	if err != nil {
		return ex, err
	}
	// A repeat of a resume that got as far as storing the new execution
	// goes on through Start (which finds it and starts its workflow if the
	// first call did not), whatever the paused one's state is by now.
	again := false
	if req.NewID != "" {
		out, err := c.es.GetExecution(ctx, req.OrgID, req.NewID)
		again = err == nil && out.ResumedFrom == ex.ID
	}
	if ex.Status != entrystore.StatusPaused && !again {
		return ex, fmt.Errorf("client: resume %s: %w (it is %s)", ex.ID, ErrNotPaused, ex.Status)
	}
	left := limit - ex.StepCount
	if left <= 0 && !again {
		return ex, fmt.Errorf("client: resume %s: %w: %d steps taken of %d", ex.ID, ErrStepLimit, ex.StepCount, limit)
	}
	var cfg agentsdk.Config
	if err := json.Unmarshal(ex.Config, &cfg); err != nil {
		return ex, fmt.Errorf("client: resume %s: config: %w", ex.ID, err)
	}
	if req.MaxSteps > 0 {
		cfg.MaxSteps = req.MaxSteps
	}
	if cfg.MaxSteps <= 0 || cfg.MaxSteps > left {
		cfg.MaxSteps = left
	}
	if req.Budget != nil {
		cfg.Budget = req.Budget
	}
	msg := req.Message
	if msg == "" {
		msg = DefaultContinue
	}
	out, err := c.Start(ctx, StartRequest{
		OrgID: ex.OrgID, Kind: ex.Kind, DefinitionID: ex.DefinitionID, ParentID: ex.ParentID,
		Config: cfg, UserPrompt: msg, Metadata: ex.Metadata,
		ResumedFrom: ex.ID, ResumeLeafID: ex.LeafEntryID, StepCount: ex.StepCount, ExecutionID: req.NewID, WithinQuota: true,
	})
	if errors.Is(err, entrystore.ErrConflict) && out.ID == "" {
		return out, fmt.Errorf("client: resume %s: %w", ex.ID, ErrResumed)
	}
	return out, err
}
