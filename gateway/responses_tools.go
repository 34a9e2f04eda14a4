package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Function tools over /v1/responses: a function the workers run is a
// worker tool (an mcp_call item); any other is the client's (a
// function_call item, answered by a function_call_output in the next
// request, which goes to the execution as a toolResult signal).

// requestTools maps function tools to worker tools by name; any other
// function is a client tool (the response ends with its function_call
// item, and the client's function_call_output continues the turn).
func (s *service) requestTools(ctx context.Context, org entrystore.Org, tools []oaTool) ([]string, []*pb.ClientTool, error) {
	if len(tools) == 0 {
		return nil, nil, nil
	}
	rows, err := s.v.live.get(ctx, false)
	if err != nil {
		return nil, nil, capError(s.log, err)
	}
	rows, _ = forOrg(rows, org.ID)
	u := union(rows)
	var names []string
	var client []*pb.ClientTool
	seen := map[string]bool{}
	for i, t := range tools {
		p := fmt.Sprintf("tools[%d]", i)
		if seen[t.Name] {
			return nil, nil, badParam(p+".name", "function %q is given twice", t.Name)
		}
		seen[t.Name] = true
		if t.Type != "function" {
			return nil, nil, badParam(p+".type", "tool type %q is not supported: only function tools (the workers' tools by name, or the client's own)", t.Type)
		}
		if _, ok := u.tools[t.Name]; ok {
			names = append(names, t.Name)
			continue
		}
		c, err := clientTool(p, t)
		if err != nil {
			return nil, nil, err
		}
		client = append(client, c)
	}
	if len(client) > agentsdk.MaxClientTools {
		return nil, nil, badParam("tools", "tools has %d client-side functions, over the %d allowed", len(client), agentsdk.MaxClientTools)
	}
	return names, client, nil
}

// clientTool is the client tool a function tool the workers do not run
// is, checked as agentsdk.Config checks it, in the request's terms.
func clientTool(p string, t oaTool) (*pb.ClientTool, error) {
	if t.Strict != nil && *t.Strict {
		return nil, badParam(p+".strict", "strict function tools are not served: the model's arguments are not constrained to the schema here")
	}
	params := t.Parameters
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	spec := agentsdk.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params}
	if problems := agentsdk.ClientToolProblems([]agentsdk.ToolSpec{spec}, ""); len(problems) > 0 {
		for i := range problems {
			problems[i] = p + problems[i]
		}
		// Each problem starts with the field it is about.
		return nil, badParam(strings.Fields(problems[0])[0], "%s", strings.Join(problems, "; "))
	}
	var st structpb.Struct
	if err := protojson.Unmarshal(params, &st); err != nil {
		return nil, badParam(p+".parameters", "%s.parameters must be a JSON Schema object", p)
	}
	return &pb.ClientTool{Name: t.Name, Description: t.Description, Parameters: &st}, nil
}

// sendToolOutputs sends function_call_output items to the client tool
// calls prev waits for, one toolResult signal each; the response they
// start runs from the last output. Every call waiting needs its output:
// the turn goes on only when it has them all.
func (s *service) sendToolOutputs(ctx context.Context, org entrystore.Org, req *oaRequest, prev *turn) (respRef, int64, error) {
	if len(prev.clientCalls) == 0 {
		return respRef{}, 0, badParam("input", "response %s waits for no function call output", prev.ref.id())
	}
	given := map[string]bool{}
	for i, o := range req.outputs {
		p := fmt.Sprintf("input[%d].call_id", i)
		if _, ok := prev.clientCalls[o.CallID]; !ok {
			return respRef{}, 0, badParam(p, "%q is not a function call response %s waits for (it waits for %s)",
				o.CallID, prev.ref.id(), strings.Join(slices.Sorted(mapKeys(prev.clientCalls)), ", "))
		}
		if given[o.CallID] {
			return respRef{}, 0, badParam(p, "%q has two outputs in this input", o.CallID)
		}
		given[o.CallID] = true
	}
	var missing []string
	for id := range prev.clientCalls {
		if !given[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return respRef{}, 0, badParam("input", "response %s waits for the output of function calls %s: send a function_call_output item for each",
			prev.ref.id(), strings.Join(missing, ", "))
	}
	after, err := s.streamAt(ctx, prev.ex)
	if err != nil {
		return respRef{}, 0, err
	}
	var ref respRef
	for _, o := range req.outputs {
		v, err := structpb.NewValue(map[string]any{"toolCallId": o.CallID, "output": o.Output})
		if err != nil {
			return respRef{}, 0, badParam("input", "function_call_output is not valid text")
		}
		sig, err := s.SignalAgentExecution(ctx, &pb.SignalAgentExecutionRequest{
			Org: org.ID, Id: prev.ex.ID, SignalName: agentsdk.SignalToolResult, SignalValue: v})
		if err != nil {
			return respRef{}, 0, err
		}
		ref = respRef{Exec: prev.ex.ID, Signal: sig.GetSignalId()}
	}
	return ref, after, nil
}
