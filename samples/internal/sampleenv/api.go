package sampleenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// The few REST calls the samples make, each the request a curl user
// would send (see the README's REST section).

// Create starts an execution of kind with cfg and the first user
// message, as POST …/agent-executions does.
func Create(ctx context.Context, c *apiclient.Client, kind string, cfg agentsdk.Config, prompt string) (*agentreev1.AgentExecution, error) {
	// The API's ExecutionConfig has the JSON shape of agentsdk.Config.
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sampleenv: config: %w", err)
	}
	pc := &agentreev1.ExecutionConfig{}
	if err := protojson.Unmarshal(raw, pc); err != nil {
		return nil, fmt.Errorf("sampleenv: config: %w", err)
	}
	ex := &agentreev1.AgentExecution{}
	req := &agentreev1.CreateAgentExecutionRequest{Kind: kind, UserPrompt: prompt, Config: pc}
	if err := c.Do(ctx, http.MethodPost, "/agent-executions", req, ex); err != nil {
		return nil, fmt.Errorf("sampleenv: start a %s execution: %w", kind, err)
	}
	return ex, nil
}

// Get is the execution as the API shows it.
func Get(ctx context.Context, c *apiclient.Client, id string) (*agentreev1.AgentExecution, error) {
	ex := &agentreev1.AgentExecution{}
	if err := c.Do(ctx, http.MethodGet, "/agent-executions/"+url.PathEscape(id), nil, ex); err != nil {
		return nil, fmt.Errorf("sampleenv: execution %s: %w", id, err)
	}
	return ex, nil
}

// Signal sends the execution the signal name with value (any value
// encoding/json takes), as POST …/signal does.
func Signal(ctx context.Context, c *apiclient.Client, id, name string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("sampleenv: signal %s: %w", name, err)
	}
	v := &structpb.Value{}
	if err := protojson.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("sampleenv: signal %s: %w", name, err)
	}
	req := &agentreev1.SignalAgentExecutionRequest{SignalName: name, SignalValue: v}
	if err := c.Do(ctx, http.MethodPost, "/agent-executions/"+url.PathEscape(id)+"/signal", req, nil); err != nil {
		return fmt.Errorf("sampleenv: signal %s to %s: %w", name, id, err)
	}
	return nil
}

// Cancel asks the execution to stop, as DELETE …/agent-executions/{id}
// does.
func Cancel(ctx context.Context, c *apiclient.Client, id string) error {
	if err := c.Do(ctx, http.MethodDelete, "/agent-executions/"+url.PathEscape(id), nil, nil); err != nil {
		return fmt.Errorf("sampleenv: cancel %s: %w", id, err)
	}
	return nil
}

// OutputText is a completed execution's final answer.
func OutputText(ex *agentreev1.AgentExecution) string {
	return ex.GetOutput().GetFields()["text"].GetStringValue()
}
