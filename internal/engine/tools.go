package engine

import (
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/step"
)

// What one tool call run at once may add to a run's history, at most: its
// activity's scheduled, started and completed events, and a workflow task
// (three events) woken by its completion; its input and result. Reserved:
// what the segment still records after its tools (appends, checkpoint,
// the end).
const (
	eventsPerTool = 6
	bytesPerTool  = 2 << 10
	reserveEvents = 12
	reserveBytes  = 8 << 10
)

// toolsThatFit is how many tool calls this run's history has room for
// (at least one: a fresh run always has room for one).
func toolsThatFit(p Port, n int) int {
	events, bytes := p.Room()
	fit := min((events-reserveEvents)/eventsPerTool, (bytes-reserveBytes)/bytesPerTool)
	return max(1, min(n, fit))
}

func (c *segment) RunTools(assistantID string, calls []agentsdk.ToolCallRef) ([]*agentsdk.ToolResult, error) {
	n := toolsThatFit(c.port, len(calls))
	par := c.cfg.WithDefaults().MaxParallelTools
	var results []*agentsdk.ToolResult
	for start := 0; start < n; start += par {
		chunk := calls[start:min(start+par, n)]
		if len(chunk) == 1 {
			// One call alone: one activity that appends its own result,
			// not an activity and a store write.
			res, err := c.runTool(assistantID, chunk[0], c.toolStep(len(results)))
			if err != nil {
				return results, err
			}
			results = append(results, res)
			continue
		}
		ins := make([]step.ToolInput, len(chunk))
		app := step.AppendResultsInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID, LeafID: c.leafID()}
		for i, tc := range chunk {
			key := c.key()
			ins[i] = step.ToolInput{
				OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
				ToolCallID: tc.ID, Key: key, StepNumber: c.toolStep(len(results) + i), Local: tc.Local,
			}
			app.ToolCallIDs, app.Keys = append(app.ToolCallIDs, tc.ID), append(app.Keys, key)
		}
		if _, err := c.port.ExecuteTools(ins); err != nil {
			return results, err
		}
		var res []agentsdk.ToolResult
		if err := c.port.Local(OpToolResults, app, &res); err != nil {
			return results, err
		}
		for i := range res {
			results = append(results, &res[i])
		}
		c.leaf = &res[len(res)-1].Entry
	}
	return results, nil
}

func (c *segment) Entry(id string) (*agentsdk.EntryRef, error) {
	var ref agentsdk.EntryRef
	if err := c.port.Local(OpEntry, EntryInput{OrgID: c.in.OrgID, EntryID: id}, &ref); err != nil {
		return nil, err
	}
	return &ref, nil
}

func (c *segment) Version(changeID string, maxSupported int) int {
	return c.port.Version(changeID, maxSupported)
}
