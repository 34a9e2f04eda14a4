package domain

import "encoding/json"

// ContextOverlay is what a variant of an execution changes in the model's
// context, over the path the leaf's ancestors make (issue 40): entries it
// leaves out, operator injections that join the context after the entry
// they hang under, and a model that replaces the one the agent asks for.
// The zero value changes nothing.
type ContextOverlay struct {
	// Excluded are the IDs of entries left out of the context.
	Excluded []string
	// Injections are the live injection entries of the execution, oldest
	// first; each joins a path that passes its parent.
	Injections []Entry
	// Model is an agentsdk.ModelRef as JSON; nil for none.
	Model json.RawMessage
}
