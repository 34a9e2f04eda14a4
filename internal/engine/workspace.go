package engine

import (
	"context"
	"fmt"
)

// Workspaces keeps an execution's workspace (the coding tools' files) on
// its conversation tree: a snapshot at every checkpoint, stored against
// the checkpoint's leaf, and restored from there. A runtime whose tools
// keep no files gives none (Ops.Workspaces nil).
type Workspaces interface {
	// Capture records the execution's workspace, if it has one, against
	// leafID. It must be repeat-safe (a retried checkpoint records the
	// same snapshot) and must not fail the checkpoint for what the
	// workspace holds (too many files, one it cannot read): only a store
	// that cannot be written is an error, which the checkpoint retries.
	Capture(ctx context.Context, orgID, executionID, leafID string) error
	// Restore makes the execution's workspace what it was at entryID:
	// the snapshot of entryID or of its nearest ancestor that has one
	// (none: nothing changes). Fork, resume, time travel and branching
	// all go through it.
	Restore(ctx context.Context, orgID, executionID, entryID string) error
	// RestoreMissing is Restore when the execution has no workspace on
	// this worker: the first segment of a fork or a resume (a new
	// execution ID, so a new directory), or a segment on a worker that
	// replaced the one that held the files.
	RestoreMissing(ctx context.Context, orgID, executionID, leafID string) error
}

// RestoreWorkspaceInput names the entry whose workspace an execution
// takes (Ops.RestoreWorkspace).
type RestoreWorkspaceInput struct {
	OrgID, ExecutionID, EntryID string
}

// RestoreWorkspace makes the execution's workspace what it was at
// in.EntryID (Workspaces.Restore); without Workspaces it does nothing.
// It is OpRestoreWorkspace, for a segment that moves the execution's
// leaf back (a branch) and wants the files to follow; workflow code
// that calls it must gate the call on a change marker, as any new
// recorded step.
func (o *Ops) RestoreWorkspace(ctx context.Context, in RestoreWorkspaceInput) error {
	if o.Workspaces == nil {
		return nil
	}
	if err := o.Workspaces.Restore(ctx, in.OrgID, in.ExecutionID, in.EntryID); err != nil {
		return fmt.Errorf("engine: restore workspace: %w", err)
	}
	return nil
}
