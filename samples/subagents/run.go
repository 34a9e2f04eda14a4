package subagents

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Run starts the lead on Question through the REST API, streams it to w
// until it ends, then lists its sub-agents: each a child execution of its
// own.
func Run(ctx context.Context, api *apiclient.Client, w io.Writer) (*agentreev1.AgentExecution, []*agentreev1.AgentExecution, error) {
	ex, err := sampleenv.Create(ctx, api, react.Kind, Config(), Question)
	if err != nil {
		return ex, nil, fmt.Errorf("start the lead: %w", err)
	}
	fmt.Fprintf(w, "lead %s\nuser: %s\n\n", ex.GetId(), Question)
	ex, err = sampleenv.Follow(ctx, api, ex.GetId(), w, sampleenv.Ended)
	if err != nil {
		return ex, nil, err
	}
	page := &agentreev1.ListAgentExecutionsResponse{}
	if err := api.Do(ctx, http.MethodGet, "/agent-executions/"+url.PathEscape(ex.GetId())+"/children?pageSize=50", nil, page); err != nil {
		return ex, nil, fmt.Errorf("the lead's sub-agents: %w", err)
	}
	team := page.GetAgentExecutions()
	fmt.Fprintf(w, "\nthe lead's %d sub-agents (GET …/agent-executions/%s/children):\n", len(team), ex.GetId())
	for _, c := range team {
		fmt.Fprintf(w, "  %s  %-9s  %d step(s)\n", c.GetId(), c.GetStatus(), c.GetStepCount())
	}
	return ex, team, nil
}
