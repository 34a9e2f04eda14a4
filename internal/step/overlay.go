package step

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// Overlayer is a Store that keeps variants (issue 40): what an
// execution's active variant changes in its context. A store without
// them (the worker-local store, agenttest's) sends every path as it is.
type Overlayer interface {
	// ContextOverlay is the overlay of the execution's active variant.
	ContextOverlay(ctx context.Context, orgID, executionID string) (domain.ContextOverlay, error)
}

// Overlay is a variant's change to the contexts built from its paths:
// entries left out, injections joined after the entry they hang under,
// and the model its calls use instead of the one asked for. The zero
// Overlay changes nothing.
type Overlay struct {
	excluded map[string]bool
	after    map[string][]agentsdk.Entry
	// Model, when set, replaces every call's model.
	Model *agentsdk.ModelRef
}

// OverlayOf is the Overlay of a store's overlay.
func OverlayOf(o domain.ContextOverlay) (Overlay, error) {
	var out Overlay
	if len(o.Model) > 0 && string(o.Model) != "null" {
		var m agentsdk.ModelRef
		if err := json.Unmarshal(o.Model, &m); err != nil {
			return out, fmt.Errorf("step: variant model override: %w", err)
		}
		out.Model = &m
	}
	for _, id := range o.Excluded {
		if out.excluded == nil {
			out.excluded = map[string]bool{}
		}
		out.excluded[id] = true
	}
	for _, e := range o.Injections {
		if out.excluded[e.ID] {
			continue
		}
		if out.after == nil {
			out.after = map[string][]agentsdk.Entry{}
		}
		out.after[e.ParentID] = append(out.after[e.ParentID], SDKEntry(e))
	}
	return out, nil
}

// Excludes reports whether the overlay leaves the entry id out.
func (o Overlay) Excludes(id string) bool { return o.excluded[id] }

// Changes reports whether the overlay changes any path.
func (o Overlay) Changes() bool { return len(o.excluded) > 0 || len(o.after) > 0 }

// Apply is path (root first) as the variant sees it: excluded entries
// left out, each injection right after the entry it hangs under. It
// returns path itself when nothing changes.
func (o Overlay) Apply(path []agentsdk.Entry) []agentsdk.Entry {
	if !o.Changes() {
		return path
	}
	out := make([]agentsdk.Entry, 0, len(path)+len(o.after))
	changed := false
	for _, e := range path {
		if o.excluded[e.ID] {
			changed = true
			continue
		}
		out = append(out, e)
		if inj := o.after[e.ID]; len(inj) > 0 {
			out = append(out, inj...)
			changed = true
		}
	}
	if !changed {
		return path
	}
	return out
}

// overlay is the execution's active variant's overlay, if its store keeps
// variants.
func (d Deps) overlay(ctx context.Context, orgID, executionID string) (Overlay, error) {
	s, ok := d.Store.(Overlayer)
	if !ok {
		return Overlay{}, nil
	}
	o, err := s.ContextOverlay(ctx, orgID, executionID)
	if err != nil {
		return Overlay{}, fmt.Errorf("step: variant: %w", err)
	}
	return OverlayOf(o)
}

// overlaid is the view and path v and path were built from, as the
// overlay sees them.
func (o Overlay) overlaid(v View, path []agentsdk.Entry) (View, []agentsdk.Entry, error) {
	p := o.Apply(path)
	if len(p) == len(path) && (len(p) == 0 || &p[0] == &path[0]) {
		return v, path, nil
	}
	v, err := ViewOf(p)
	return v, p, err
}
