package adapter

import (
	"fmt"
	"maps"

	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
)

// adapterChanges are the changes the adapter's own workflow code guards,
// at their highest versions.
var adapterChanges = map[string]int{searchAttributesChange: 2, workerHeldChange: 1, commitChange: 2}

// changes are the versions a new run records in its side effect: the
// adapter's changes and those the agent declares (agentsdk.Versioned).
// workflow.GetVersion would add a marker and a TemporalChangeVersion
// search-attribute update to every run for each of them — on the server
// an update of the run's visibility record, the costliest event a turn
// has — and runs continue as new every few turns.
func (r *segmentRunner) changes() map[string]int {
	out := maps.Clone(adapterChanges)
	maps.Copy(out, agentsdk.RuntimeChanges)
	if v, ok := r.agent.(agentsdk.Versioned); ok {
		maps.Copy(out, v.Changes())
	}
	return out
}

// version is changeID's version in this run: the one the run recorded
// when it started, or, for a change the run did not record (a run
// recorded before its changes were, or a change its agent does not
// declare), workflow.GetVersion's. Replays agree either way: a recorded
// version never changes, and a run that did not record a change asks
// Temporal, as it did when it ran.
func version(ctx workflow.Context, recorded map[string]int, changeID string, maxSupported int) workflow.Version {
	v, ok := recorded[changeID]
	if !ok {
		return workflow.GetVersion(ctx, changeID, workflow.DefaultVersion, workflow.Version(maxSupported))
	}
	if v > maxSupported {
		// As GetVersion does: the workflow task fails, and is retried,
		// until a worker with newer code takes it.
		panic(fmt.Sprintf("agentree: this run recorded change %q at version %d; this worker's code supports up to %d", changeID, v, maxSupported))
	}
	return workflow.Version(v)
}
