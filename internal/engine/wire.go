package engine

import "github.com/agentree/agentree/internal/wire"

// The types that cross between clients and workflows are defined in
// internal/wire, so a client links them without the engine; these names
// are the same types, for the engine's code and its runtimes.
type (
	SegmentInput    = wire.SegmentInput
	Result          = wire.Result
	CheckpointInput = wire.CheckpointInput
	PendingApproval = wire.PendingApproval
)

// SignalName is the one Temporal signal Agentree sends (wire.SignalName).
const SignalName = wire.SignalName
