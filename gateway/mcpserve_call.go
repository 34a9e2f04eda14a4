package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// mcpCallInput is a run_{slug} tool's arguments.
type mcpCallInput struct {
	Message     string `json:"message" jsonschema:"what to tell the agent: the task, or the reply it waits for"`
	ExecutionID string `json:"executionId,omitempty" jsonschema:"continue this execution, which waits for input (status WAITING), instead of starting one"`
}

// mcpCallOutput is a tool result's structured content.
type mcpCallOutput struct {
	ExecutionID string `json:"executionId" jsonschema:"the execution: follow it over the REST API, or continue it with the next call"`
	Status      string `json:"status" jsonschema:"COMPLETED, WAITING, FAILED, CANCELLED, PAUSED, or RUNNING when the call stopped waiting"`
	StopReason  string `json:"stopReason,omitempty" jsonschema:"why the execution stopped or waits"`
}

// mcpCall runs a tool call: starts an execution of the definition with
// the message, or sends it to the waiting execution, then waits, sending
// progress, until it answers, waits or ends. Refusals are tool errors in
// the caller's terms (isError): an MCP client shows them to its user.
func (s *service) mcpCall(ctx context.Context, a a2aAgent, req *mcp.CallToolRequest, in mcpCallInput) (*mcp.CallToolResult, mcpCallOutput, error) {
	var none mcpCallOutput
	if !a.key.Has(entrystore.RoleRun) {
		return nil, none, &permissionDenied{role: entrystore.RoleRun, what: "calling an MCP tool (it runs an agent)"}
	}
	if strings.TrimSpace(in.Message) == "" {
		return nil, none, errors.New(`the argument "message" is required: what to tell the agent`)
	}
	release, err := s.streamSlot(ctx, a.org.ID)
	if err != nil {
		return nil, none, mcpErr(err)
	}
	defer release()
	ex, after, err := s.mcpStart(ctx, a, in)
	if err != nil {
		return nil, none, mcpErr(err)
	}
	waited, err := s.mcpAwait(ctx, req, ex, after)
	if err != nil {
		return nil, none, mcpErr(err)
	}
	if ex, err = s.a2aExecution(ctx, a, ex.ID); err != nil {
		return nil, none, mcpErr(err)
	}
	out := mcpCallOutput{ExecutionID: ex.ID, Status: string(ex.Status), StopReason: ex.StopReason}
	if !waited {
		return mcpText(false, fmt.Sprintf("The agent is still working after %s; execution %s runs on: follow it with GET /api/orgs/%s/agent-executions/%s.",
			s.mcpCallTimeout, ex.ID, a.org.Slug, ex.ID)), out, nil
	}
	text, err := s.mcpAnswer(ctx, a, ex)
	if err != nil {
		return nil, none, mcpErr(err)
	}
	failed := ex.Status == entrystore.StatusFailed || ex.Status == entrystore.StatusCancelled
	return mcpText(failed, text), out, nil
}

// mcpStart starts an execution of a's definition with in's message, or,
// with in.ExecutionID, sends the message to that execution as a
// userMessage signal (the REST signal's path). It returns the execution
// and the stream event it had reached before, where the answer starts.
func (s *service) mcpStart(ctx context.Context, a a2aAgent, in mcpCallInput) (entrystore.Execution, int64, error) {
	var none entrystore.Execution
	if in.ExecutionID == "" {
		created, err := s.CreateAgentExecution(ctx, &pb.CreateAgentExecutionRequest{
			Org: a.org.ID, AgentDefinitionId: a.def.ID, UserPrompt: in.Message})
		if err != nil {
			return none, 0, err
		}
		ex, err := s.a2aExecution(ctx, a, created.GetId())
		return ex, 0, err
	}
	ex, err := s.a2aExecution(ctx, a, in.ExecutionID)
	if err != nil {
		return none, 0, fmt.Errorf("execution %s of this agent not found", quoteShort(in.ExecutionID))
	}
	if ex.Status.Terminal() {
		return none, 0, fmt.Errorf("execution %s has ended (%s); call without executionId to start a new one", ex.ID, ex.Status)
	}
	after, waiting, err := s.continuing(ctx, ex)
	if err != nil {
		return none, 0, err
	}
	if len(waiting) > 0 {
		return none, 0, fmt.Errorf("execution %s waits for the approval of tool call %q, which MCP cannot give: decide it with POST /api/orgs/%s/agent-executions/%s/tool-calls/%s/decision",
			ex.ID, waiting[0].ToolCallID, a.org.Slug, ex.ID, waiting[0].ToolCallID)
	}
	v, err := structpb.NewValue(map[string]any{"text": in.Message})
	if err != nil {
		return none, 0, errors.New(`the argument "message" is not valid UTF-8`)
	}
	_, err = s.SignalAgentExecution(ctx, &pb.SignalAgentExecutionRequest{
		Org: a.org.ID, Id: ex.ID, SignalName: agentsdk.SignalUserMessage, SignalValue: v})
	return ex, after, err
}

// mcpAwait follows execution ex's consolidated stream from event after
// until it waits or ends, for at most the MCP call timeout, sending a
// progress notification per text chunk and tool start when the client
// asked for progress. It reports whether the execution got there.
func (s *service) mcpAwait(ctx context.Context, req *mcp.CallToolRequest, ex entrystore.Execution, after int64) (bool, error) {
	wctx, cancel := context.WithTimeout(ctx, s.mcpCallTimeout)
	defer cancel()
	token := req.Params.GetProgressToken()
	var sent float64
	progress := func(msg string) {
		if token == nil || req.Session == nil {
			return
		}
		sent++
		// A progress notification lost (the client left) loses nothing
		// the result will not carry.
		_ = req.Session.NotifyProgress(wctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: sent, Message: msg})
	}
	nop := func() error { return nil }
	err := s.streams.follow(wctx, followRequest{
		Org: ex.OrgID, Execution: ex.ID, After: after, Consolidated: true,
		Emit: func(ev entrystore.StreamEvent) error {
			if a2aEndsTurn(ev.Event) {
				return errRunDone
			}
			if msg := mcpProgressOf(ev); msg != "" {
				progress(msg)
			}
			return nil
		},
		Flush: nop, Ping: nop,
	})
	switch {
	case err == nil || errors.Is(err, errRunDone):
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err() // the client left: nobody reads the result
	case wctx.Err() != nil:
		return false, nil
	}
	return false, toStatus(s.log, "follow the execution", err)
}

// mcpProgressOf is what a progress notification says of a stored event:
// a model call's text as it streams, a tool starting; "" for the rest.
func mcpProgressOf(ev entrystore.StreamEvent) string {
	switch ev.Event {
	case event.NameToken:
		var tok event.Token
		if json.Unmarshal(ev.Data, &tok) == nil {
			return tok.Data
		}
	case event.NameTaskStarted:
		var t event.TaskStarted
		if json.Unmarshal(ev.Data, &t) == nil && t.Kind != "" {
			return "running " + t.Kind
		}
	}
	return ""
}

// mcpAnswer is a tool result's text for execution ex, which waits or has
// ended: its answer, what it waits for, or why it failed (the execution's
// stored error: what the REST API shows, no internals).
func (s *service) mcpAnswer(ctx context.Context, a a2aAgent, ex entrystore.Execution) (string, error) {
	if ex.Status == entrystore.StatusWaiting {
		calls, err := s.pendingApprovals(ctx, ex)
		if err != nil {
			return "", err
		}
		if len(calls) > 0 {
			var b strings.Builder
			for _, c := range calls {
				fmt.Fprintf(&b, "\n- %s with %s: POST /api/orgs/%s/agent-executions/%s/tool-calls/%s/decision",
					c.ToolName, compactJSON(c.Input), a.org.Slug, ex.ID, c.ToolCallID)
			}
			return fmt.Sprintf("Execution %s waits for the approval of these tool calls; decide each over the REST API (approve role):%s", ex.ID, b.String()), nil
		}
	}
	zero := 0
	task, err := s.a2aTaskOf(ctx, ex, &zero)
	if err != nil {
		return "", err
	}
	var text []string
	if m := task.Status.Message; m != nil {
		for _, p := range m.Parts {
			if p.Kind == "text" {
				text = append(text, p.Text)
			}
		}
	}
	if ex.Status == entrystore.StatusCancelled {
		text = append(text, "The execution was cancelled.")
	}
	if len(text) == 0 {
		text = append(text, fmt.Sprintf("Execution %s is %s.", ex.ID, ex.Status))
	}
	return strings.Join(text, "\n"), nil
}

// mcpText is a tool result of one text.
func mcpText(isError bool, text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// mcpErr is a refusal as a tool error: a gRPC status's message is already
// in the caller's terms (toStatus logged and hid an internal error), as
// are the A2A errors a2aExecution returns.
func mcpErr(err error) error {
	if st, ok := status.FromError(err); ok {
		return errors.New(st.Message())
	}
	var e *rpcError
	if errors.As(err, &e) {
		return errors.New(e.Message)
	}
	return err
}
