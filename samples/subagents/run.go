package subagents

import (
	"context"
	"fmt"
	"io"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Run starts the lead on Question, streams it to w until it ends, then
// lists its sub-agents: each a child execution of its own.
func Run(ctx context.Context, ac *aclient.Client, store *entrystore.Store, orgID string, w io.Writer) (entrystore.Execution, []entrystore.Execution, error) {
	ex, err := ac.Start(ctx, aclient.StartRequest{OrgID: orgID, Kind: react.Kind, Config: Config(), UserPrompt: Question})
	if err != nil {
		return ex, nil, fmt.Errorf("start the lead: %w", err)
	}
	fmt.Fprintf(w, "lead %s\nuser: %s\n\n", ex.ID, Question)
	ex, err = sampleenv.Follow(ctx, store, orgID, ex.ID, w, sampleenv.Ended)
	if err != nil {
		return ex, nil, err
	}
	team, _, err := store.ListExecutions(ctx, orgID, entrystore.ExecutionFilter{ParentID: ex.ID}, entrystore.Page{Limit: 50})
	if err != nil {
		return ex, nil, err
	}
	fmt.Fprintf(w, "\nthe lead's %d sub-agents (GET …/agent-executions/%s/children):\n", len(team), ex.ID)
	for _, c := range team {
		fmt.Fprintf(w, "  %s  %-9s  %d step(s)\n", c.ID, c.Status, c.StepCount)
	}
	return ex, team, nil
}
