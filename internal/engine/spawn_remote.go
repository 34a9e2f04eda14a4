package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// Remote sub-agents (issue 39): a spawn_agents agent that names a remote
// A2A agent is done by that agent instead of a local child execution. The
// call only names it: the address and credentials are the worker's
// (Ops.RemoteAgents lists what it has), so a name the worker does not have
// is refused like any other bad argument, as a tool result the model reads.

// remoteProblem says what is wrong with the call's remote agents, or "".
func (o *Ops) remoteProblem(args agentsdk.SpawnArgs) string {
	for i, a := range args.Agents {
		if a.Remote == "" {
			continue
		}
		switch {
		case !slices.Contains(o.RemoteAgents, a.Remote):
			known := "this worker has none"
			if len(o.RemoteAgents) > 0 {
				known = "it has " + strings.Join(o.RemoteAgents, ", ")
			}
			return fmt.Sprintf("agents[%d].remote: no remote agent %q (%s)", i, a.Remote, known)
		case a.ResumeRunID != "" || a.SystemPrompt != "" || len(a.Tools) > 0 || a.MaxSteps != 0:
			return fmt.Sprintf("agents[%d]: a remote agent has its own instructions, tools and budget: give it only name and prompt", i)
		case strings.TrimSpace(a.Prompt) == "":
			return fmt.Sprintf("agents[%d].prompt is empty", i)
		}
	}
	return ""
}

// remoteChild plans the i-th agent of call callID as a remote child: its
// ID is derived like a local child's, and (call, i) keys its remote task.
func remoteChild(a agentsdk.SubAgent, i int, id, callID string) ChildStart {
	return ChildStart{ExecutionID: id, Name: cmp.Or(a.Name, a.Remote), Prompt: a.Prompt,
		Remote: a.Remote, ToolCallID: callID, Index: i}
}
