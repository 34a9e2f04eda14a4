// Package conformance holds the scenarios every runtime of the segment
// engine must play the same way: the Temporal plugin (adapter) and the
// in-memory runtime (agentsdk/agenttest). Its test runs each scenario on
// both and compares what they leave behind — entries, tool-call records,
// checkpoints, stream events, the final status — with IDs and times
// normalised away. A difference between runtimes fails the test.
//
// It imports agentsdk and its subpackages and internal/domain (the
// checkpoint both runtimes record); its test also the adapter,
// entrystore and the test services.
package conformance
