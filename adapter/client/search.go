package client

import (
	"context"
	"errors"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentree/agentree/entrystore"
)

// The custom search attributes every agent workflow carries, so the
// Temporal UI and `temporal workflow list --query` find executions by
// organization, kind, status and definition. All are Keyword. A cluster
// must have them registered before a workflow uses them (`make up` starts
// the dev server with them; see README "Observability" for other
// clusters).
var (
	SearchOrg        = temporal.NewSearchAttributeKeyKeyword("AgentreeOrg")
	SearchKind       = temporal.NewSearchAttributeKeyKeyword("AgentreeKind")
	SearchStatus     = temporal.NewSearchAttributeKeyKeyword("AgentreeStatus")
	SearchDefinition = temporal.NewSearchAttributeKeyKeyword("AgentreeDefinition")
)

// SearchAttributeNames are the names of the custom search attributes, all
// of type Keyword.
var SearchAttributeNames = []string{SearchOrg.GetName(), SearchKind.GetName(), SearchStatus.GetName(), SearchDefinition.GetName()}

// SearchAttributes are an execution's search attributes as its workflow
// starts: the workflow keeps AgentreeStatus current from then on.
func SearchAttributes(ex entrystore.Execution) temporal.SearchAttributes {
	updates := []temporal.SearchAttributeUpdate{
		SearchOrg.ValueSet(ex.OrgID),
		SearchKind.ValueSet(ex.Kind),
		SearchStatus.ValueSet(string(ex.Status)),
	}
	if ex.DefinitionID != "" {
		updates = append(updates, SearchDefinition.ValueSet(ex.DefinitionID))
	}
	return temporal.NewSearchAttributes(updates...)
}

// ExecuteWorkflow starts an execution's workflow with opts, its search
// attributes included. A cluster where they are not registered refuses
// them: the workflow then starts without them (it keeps none current),
// so an unprepared cluster loses the Temporal UI's filters, not the
// execution.
func ExecuteWorkflow(ctx context.Context, tc client.Client, opts client.StartWorkflowOptions, kind string, args ...any) (client.WorkflowRun, error) {
	run, err := tc.ExecuteWorkflow(ctx, opts, kind, args...)
	var invalid *serviceerror.InvalidArgument
	if err != nil && errors.As(err, &invalid) && strings.Contains(strings.ToLower(err.Error()), "search attribute") {
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		return tc.ExecuteWorkflow(ctx, opts, kind, args...)
	}
	return run, err
}
