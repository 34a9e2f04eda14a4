package client

import (
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
