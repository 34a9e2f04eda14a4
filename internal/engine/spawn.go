package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/step"
)

// Sub-agents (seed 001). A spawn_agents call is answered in three moves:
// PlanSpawn (a store operation) reads the call and the parent's config and
// says which children to start, with IDs derived from the call so a replay
// or a retry names the same ones; the Port starts them as child
// executions and waits for them; AnswerSpawn appends an agent_result entry
// per child and the call's tool_result, which holds their answers.

// ChildStart is one child execution to start.
type ChildStart struct {
	ExecutionID string
	Name        string
	Config      agentsdk.Config
	Prompt      string
	// A resume of a paused child: the execution it resumes, its leaf and
	// its step count (see client.Resume).
	ResumedFrom, ResumeLeafID string
	StepCount                 int
	// Remote, when set, names the remote A2A agent that does the task
	// (its ToolCallID and Index key its remote task); Config is then
	// unused. Omitted when empty, so local children's plans are recorded
	// as before.
	Remote     string `json:",omitempty"`
	ToolCallID string `json:",omitempty"`
	Index      int    `json:",omitempty"`
}

// ChildOutcome is how a child execution ended.
type ChildOutcome struct {
	ExecutionID string                `json:"executionId"`
	Name        string                `json:"name,omitempty"`
	Status      string                `json:"status"`
	StopReason  string                `json:"stopReason,omitempty"`
	Text        string                `json:"text,omitempty"`
	Error       string                `json:"error,omitempty"`
	Usage       agentsdk.UsageTracker `json:"usage,omitempty"`
	// Remote and RemoteTaskID name a remote child's agent and its task.
	Remote       string `json:"remote,omitempty"`
	RemoteTaskID string `json:"remoteTaskId,omitempty"`
}

// SpawnInput names a spawn_agents call.
type SpawnInput struct {
	OrgID, ExecutionID, AssistantID, ToolCallID string
}

// SpawnPlan is what a spawn_agents call asks for. Problem, when set, is
// why it starts nothing: the call is answered with it as an error.
type SpawnPlan struct {
	Children  []ChildStart
	WaitFirst bool
	Problem   string
}

// PlanSpawn reads a spawn_agents call and the parent's configuration and
// returns the children to start: each with the parent's models and tool
// policy, the tools it asks for among the parent's (never spawn_agents: a
// sub-agent does not spawn), its own step budget, one-shot.
//
// A call whose recorded policy forbids it, or asks for an approval no
// person gave, starts nothing (step.Refusal): the check every path that
// runs a tool makes.
func (o *Ops) PlanSpawn(ctx context.Context, in SpawnInput) (SpawnPlan, error) {
	call, assistant, err := o.toolCall(ctx, in.OrgID, in.AssistantID, in.ToolCallID)
	if err != nil {
		return SpawnPlan{}, err
	}
	policy := step.AnswerMetaOf(assistant).Policy(call.ID)
	refusal, err := step.Refusal(ctx, o.Store, in.OrgID, in.ExecutionID, assistant, call, policy, false)
	if err != nil {
		return SpawnPlan{}, fmt.Errorf("engine: spawn: %w", err)
	}
	if refusal != "" {
		return SpawnPlan{Problem: strings.TrimPrefix(refusal, "error: ")}, nil
	}
	ex, err := o.Store.Execution(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return SpawnPlan{}, fmt.Errorf("engine: spawn: %w", err)
	}
	parent, err := DecodeConfig(ex.Config)
	if err != nil {
		return SpawnPlan{}, err
	}
	o.publish(ctx, in.OrgID, in.ExecutionID, event.TaskStarted{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID,
		Kind: call.Name, Arguments: call.Arguments})
	var args agentsdk.SpawnArgs
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return SpawnPlan{Problem: fmt.Sprintf("the arguments are not spawn_agents arguments: %v", err)}, nil
	}
	if problem := cmp.Or(spawnProblem(args, parent), o.remoteProblem(args)); problem != "" {
		return SpawnPlan{Problem: problem}, nil
	}
	plan := SpawnPlan{WaitFirst: args.WaitFor == "first"}
	for i, a := range args.Agents {
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s/%s/%d", in.ExecutionID, call.ID, i)).String()
		if a.Remote != "" {
			plan.Children = append(plan.Children, remoteChild(a, i, id, call.ID))
			continue
		}
		if a.ResumeRunID != "" {
			c, problem, err := o.resumeChild(ctx, in, a, i, id)
			if err != nil || problem != "" {
				return SpawnPlan{Problem: problem}, err
			}
			plan.Children = append(plan.Children, c)
			continue
		}
		cfg := parent
		cfg.Mode, cfg.MaxSteps = agentsdk.ModeOneShot, a.MaxSteps
		if cfg.MaxSteps == 0 {
			cfg.MaxSteps = agentsdk.DefaultSubAgentSteps
		}
		if a.SystemPrompt != "" {
			cfg.SystemPrompt = a.SystemPrompt
		}
		cfg.Tools = slices.DeleteFunc(slices.Clone(parent.Tools), func(t string) bool {
			return t == agentsdk.ToolSpawnAgents || (len(a.Tools) > 0 && !slices.Contains(a.Tools, t))
		})
		name := a.Name
		if name == "" {
			name = fmt.Sprintf("agent-%d", i+1)
		}
		plan.Children = append(plan.Children, ChildStart{ExecutionID: id, Name: name, Config: cfg, Prompt: a.Prompt})
	}
	return plan, nil
}

// spawnProblem says what is wrong with a spawn_agents call, or "".
func spawnProblem(args agentsdk.SpawnArgs, parent agentsdk.Config) string {
	switch {
	case len(args.Agents) == 0:
		return "agents is empty: give at least one sub-agent"
	case len(args.Agents) > agentsdk.MaxSpawnAgents:
		return fmt.Sprintf("%d sub-agents asked for; at most %d per call", len(args.Agents), agentsdk.MaxSpawnAgents)
	case args.WaitFor != "" && args.WaitFor != "all" && args.WaitFor != "first":
		return fmt.Sprintf("waitFor must be all or first; got %q", args.WaitFor)
	}
	for i, a := range args.Agents {
		switch {
		case strings.TrimSpace(a.Prompt) == "" && a.ResumeRunID == "":
			return fmt.Sprintf("agents[%d].prompt is empty", i)
		case a.MaxSteps < 0 || a.MaxSteps > agentsdk.MaxTotalSteps:
			return fmt.Sprintf("agents[%d].maxSteps must be from 0 to %d", i, agentsdk.MaxTotalSteps)
		}
		for _, t := range a.Tools {
			if t == agentsdk.ToolSpawnAgents || !slices.Contains(parent.Tools, t) {
				return fmt.Sprintf("agents[%d].tools: %q is not a tool this agent can give", i, t)
			}
		}
	}
	return ""
}

// resumeChild plans the resume of a paused sub-agent of this execution as
// child id (client.Resume's rules: PAUSED, resumed once, a fresh budget cut
// to what is left of MaxTotalSteps); problem says why it cannot be.
func (o *Ops) resumeChild(ctx context.Context, in SpawnInput, a agentsdk.SubAgent, i int, id string) (ChildStart, string, error) {
	src, err := o.Store.ResumeSource(ctx, in.OrgID, a.ResumeRunID)
	if errors.Is(err, agentsdk.ErrNotFound) {
		return ChildStart{}, fmt.Sprintf("agents[%d].resumeRunId: no execution %q", i, a.ResumeRunID), nil
	}
	if err != nil {
		return ChildStart{}, "", fmt.Errorf("engine: spawn: %w", err)
	}
	switch left := agentsdk.MaxTotalSteps - src.StepCount; {
	case src.ParentID != in.ExecutionID:
		return ChildStart{}, fmt.Sprintf("agents[%d].resumeRunId: %s is not a sub-agent of this execution", i, a.ResumeRunID), nil
	case src.Status != domain.StatusPaused:
		return ChildStart{}, fmt.Sprintf("agents[%d].resumeRunId: only paused runs can be resumed; %s is %s", i, a.ResumeRunID, src.Status), nil
	case src.ResumedBy != "" && src.ResumedBy != id:
		return ChildStart{}, fmt.Sprintf("agents[%d].resumeRunId: %s was resumed already, by %s", i, a.ResumeRunID, src.ResumedBy), nil
	case left <= 0:
		return ChildStart{}, fmt.Sprintf("agents[%d].resumeRunId: %s has taken all %d steps a run may", i, a.ResumeRunID, agentsdk.MaxTotalSteps), nil
	default:
		cfg, err := DecodeConfig(src.Config)
		if err != nil {
			return ChildStart{}, "", err
		}
		cfg.MaxSteps = cmp.Or(a.MaxSteps, agentsdk.DefaultSubAgentSteps)
		cfg.MaxSteps = min(cfg.MaxSteps, left)
		name := cmp.Or(a.Name, fmt.Sprintf("agent-%d", i+1))
		return ChildStart{ExecutionID: id, Name: name, Config: cfg, Prompt: cmp.Or(a.Prompt, continueMessage),
			ResumedFrom: a.ResumeRunID, ResumeLeafID: src.LeafID, StepCount: src.StepCount}, "", nil
	}
}

// continueMessage starts a resumed sub-agent told nothing new.
const continueMessage = "Continue from where you left off."

// AnswerInput answers a spawn_agents call under ParentID.
type AnswerInput struct {
	OrgID, ExecutionID, AssistantID, ParentID, Key, ToolCallID string
	StepNumber                                                 int
	Problem                                                    string
	Outcomes                                                   []ChildOutcome
	// Text, when set, is the result of a call the agent answers itself
	// other than spawn_agents (a sleep's), in place of Outcomes.
	Text string `json:",omitempty"`
}

// AnswerSpawn appends an agent_result entry per child, then the call's
// tool_result (their answers, Text, or the problem), in one transaction,
// keyed; and records the call. Sleep calls are answered through it too.
func (o *Ops) AnswerSpawn(ctx context.Context, in AnswerInput) (agentsdk.ToolResult, error) {
	call, assistant, err := o.toolCall(ctx, in.OrgID, in.AssistantID, in.ToolCallID)
	if err != nil {
		return agentsdk.ToolResult{}, err
	}
	var entries []agentsdk.Entry
	parent := in.ParentID
	for i, c := range in.Outcomes {
		b, _ := json.Marshal(c)
		entries = append(entries, agentsdk.Entry{ExecutionID: in.ExecutionID, ParentID: parent, Type: agentsdk.EntryAgentResult,
			Content: b, TurnID: assistant.TurnID, IdempotencyKey: fmt.Sprintf("%s/child/%d", in.Key, i)})
		parent = agentsdk.PrevEntry
	}
	text, isError := cmp.Or(in.Text, spawnAnswer(in.Outcomes)), false
	if in.Problem != "" {
		text, isError = "error: "+in.Problem, true
	}
	msg, _ := json.Marshal(agentsdk.ToolResultMessage(call, text, isError))
	entries = append(entries, agentsdk.Entry{ExecutionID: in.ExecutionID, ParentID: parent, Type: agentsdk.EntryMessage,
		Role: agentsdk.RoleToolResult, Content: msg, TurnID: assistant.TurnID, IdempotencyKey: in.Key})
	got, err := o.Store.AppendEntries(ctx, in.OrgID, entries)
	if err != nil {
		return agentsdk.ToolResult{}, fmt.Errorf("engine: spawn: append results: %w", err)
	}
	res := got[len(got)-1]
	status := agentsdk.ToolCompleted
	if isError {
		status = agentsdk.ToolError
	}
	out, _ := json.Marshal(map[string]any{"text": text, "isError": isError})
	err = o.Store.RecordToolCall(ctx, agentsdk.ToolCallRecord{
		OrgID: in.OrgID, ExecutionID: in.ExecutionID, MessageID: in.AssistantID, ResultEntryID: res.ID,
		ToolCallID: call.ID, ToolName: call.Name, Status: status, Input: call.Arguments, Output: out,
		OutputSize: int64(len(text)), StepNumber: in.StepNumber,
	})
	if err != nil {
		return agentsdk.ToolResult{}, fmt.Errorf("engine: spawn: record: %w", err)
	}
	o.publish(ctx, in.OrgID, in.ExecutionID, event.Data{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID,
		Data: event.Payload{Type: event.TypeToolResult, ToolCall: &event.ToolCall{ID: call.ID, Name: call.Name},
			Result: &event.ToolResult{IsError: isError, Preview: agentsdk.Preview(text)}}})
	var ended event.Event = event.TaskCompleted{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Kind: call.Name}
	if isError {
		ended = event.TaskFailed{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Kind: call.Name, Error: text}
	}
	o.publish(ctx, in.OrgID, in.ExecutionID, ended)
	ref, err := step.Ref(res)
	if err != nil {
		return agentsdk.ToolResult{}, err
	}
	return agentsdk.ToolResult{Entry: ref, ToolCallID: call.ID, IsError: isError, Preview: ref.Preview}, nil
}

// spawnAnswer is what the model reads of its sub-agents: each one's name,
// how it ended and its answer.
func spawnAnswer(outcomes []ChildOutcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d sub-agent(s) ended.\n", len(outcomes))
	for _, c := range outcomes {
		if c.Remote != "" {
			fmt.Fprintf(&b, "\n## %s (%s, remote agent %s, task %s)\n", c.Name, c.Status, c.Remote, c.RemoteTaskID)
		} else {
			fmt.Fprintf(&b, "\n## %s (%s, execution %s)\n", c.Name, c.Status, c.ExecutionID)
		}
		switch {
		case c.Status == string(domain.StatusPaused) && c.StopReason == agentsdk.StopBudget:
			b.WriteString("It paused before answering: " + c.Error + ". It can be resumed once its budget allows.\n")
		case c.Status == string(domain.StatusPaused):
			b.WriteString("It spent its step budget before answering; it can be resumed.\n")
		case c.Error != "":
			b.WriteString("error: " + c.Error + "\n")
		}
		if c.Text != "" {
			b.WriteString(c.Text + "\n")
		}
	}
	return b.String()
}

// SpawnAgents implements agentsdk.Context.
func (c *segment) SpawnAgents(assistantID string, call agentsdk.ToolCallRef) (*agentsdk.ToolResult, error) {
	var plan SpawnPlan
	if err := c.port.Local(OpPlanSpawn, SpawnInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID, ToolCallID: call.ID}, &plan); err != nil {
		return nil, err
	}
	in := AnswerInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
		ToolCallID: call.ID, StepNumber: c.toolStep(0), Problem: plan.Problem}
	if plan.Problem == "" {
		outcomes, err := c.port.RunChildren(c.in.OrgID, c.in.ExecutionID, plan.Children, plan.WaitFirst)
		if err != nil {
			return nil, err
		}
		in.Outcomes = outcomes
		for _, o := range outcomes {
			for model, u := range o.Usage {
				if c.state.Usage == nil {
					c.state.Usage = agentsdk.UsageTracker{}
				}
				c.state.Usage[model] = c.state.Usage[model].Add(u)
			}
		}
	}
	return c.answerCall(in)
}
