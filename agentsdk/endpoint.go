package agentsdk

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// EndpointInfo describes one named model endpoint a worker serves: what the
// worker records in its capabilities and what a request may name. It never
// holds a URL or a key: those are worker configuration and stay there.
type EndpointInfo struct {
	// Name is the endpoint's name, unique per worker ("anthropic",
	// "local-vllm"); a request's ModelRef.Endpoint picks it.
	Name string `json:"name"`
	// Provider is the provider kind: "anthropic", "openai", "scripted".
	Provider string `json:"provider"`
	// Models are the model IDs allowed on the endpoint; ["*"] allows any.
	Models []string `json:"models"`
	// Priced, when not nil, are the model IDs the endpoint has a price
	// for or that its operator marked unpriced ("*": every one): of the
	// models Models allows it serves only these, so no model runs whose
	// cost nobody counts. A dated ID (claude-x-20250101,
	// gpt-x-2025-01-01) is priced by its alias, the ID without the date.
	// nil: the endpoint does not say (a provider that does not price),
	// and every model Models allows is served.
	Priced []string `json:"priced,omitempty"`
}

// datedID matches the snapshot date at the end of a dated model ID, as
// Anthropic (-20250101) and OpenAI (-2025-01-01) write it.
var datedID = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// HasPrice reports whether the endpoint may serve model as far as
// prices go: it has a price for it, or its operator marked it unpriced.
func (e EndpointInfo) HasPrice(model string) bool {
	if e.Priced == nil {
		return true
	}
	return slices.Contains(e.Priced, AnyModel) || slices.Contains(e.Priced, model) ||
		slices.Contains(e.Priced, datedID.ReplaceAllString(model, ""))
}

// ErrUnpriced is what a model the endpoint allows but has no price for
// fails with (wrapped, with ErrInvalidInput).
var ErrUnpriced = errors.New("has no price")

// UnpricedError says that model has no price on endpoint, in the terms of
// the worker configuration that would fix it.
func UnpricedError(endpoint, model string) error {
	return fmt.Errorf("%w: model %q on endpoint %q %w: the operator gives it one (prices: {%s: {input: …, output: …}}) or marks it unpriced (prices: {%s: unpriced})",
		ErrInvalidInput, model, endpoint, ErrUnpriced, model, model)
}

// EndpointDescriber is implemented by providers that know which endpoint
// they serve; a provider that does not is reported as an endpoint named
// after its provider kind allowing any model.
type EndpointDescriber interface {
	Endpoint() EndpointInfo
}

// Describe is p's endpoint: what p says when it is an EndpointDescriber,
// else an endpoint named after its provider allowing any model.
func Describe(p Provider) EndpointInfo {
	if d, ok := p.(EndpointDescriber); ok {
		e := d.Endpoint()
		if len(e.Models) == 0 {
			e.Models = []string{AnyModel}
		}
		return e
	}
	return EndpointInfo{Name: p.Name(), Provider: p.Name(), Models: []string{AnyModel}}
}

// AnyModel in EndpointInfo.Models allows every model ID.
const AnyModel = "*"

// Allows reports whether the endpoint serves model.
func (e EndpointInfo) Allows(model string) bool {
	for _, m := range e.Models {
		if m == AnyModel || m == model {
			return true
		}
	}
	return false
}

// Endpoints routes a ModelRef to the provider of one of the worker's
// endpoints. It is built once, when the worker starts, from providers
// whose URLs and keys are already fixed: a request only picks among them.
// It is safe for concurrent use.
type Endpoints struct {
	list []endpoint
}

type endpoint struct {
	info EndpointInfo
	p    Provider
}

// NewEndpoints returns the router for providers, in order: for a provider
// with several endpoints, the first is its default. Endpoint names must be
// unique and non-empty.
func NewEndpoints(providers ...Provider) (*Endpoints, error) {
	e := &Endpoints{}
	seen := map[string]bool{}
	for _, p := range providers {
		info := Describe(p)
		if info.Name == "" || info.Provider == "" {
			return nil, fmt.Errorf("%w: an endpoint of provider %q has no name", ErrInvalidInput, p.Name())
		}
		if seen[info.Name] {
			return nil, fmt.Errorf("%w: endpoint %q is declared twice", ErrInvalidInput, info.Name)
		}
		seen[info.Name] = true
		e.list = append(e.list, endpoint{info: info, p: p})
	}
	return e, nil
}

// Infos describes every endpoint, in order.
func (e *Endpoints) Infos() []EndpointInfo {
	out := make([]EndpointInfo, len(e.list))
	for i, ep := range e.list {
		out[i] = ep.info
	}
	return out
}

// Resolve returns the provider serving ref: the endpoint ref names, or the
// first of ref's provider that allows its model (so a worker with a
// hosted and a local endpoint of one provider routes each model where it
// is served, as the gateway's validation assumes). An unknown provider or
// endpoint, or a model no such endpoint allows, is an ErrInvalidInput
// error naming what the worker does serve.
func (e *Endpoints) Resolve(ref ModelRef) (Provider, error) {
	var names []string
	var refused, unpriced *EndpointInfo
	for i, ep := range e.list {
		if ep.info.Provider != ref.Provider {
			continue
		}
		names = append(names, ep.info.Name)
		if ref.Endpoint != "" && ref.Endpoint != ep.info.Name {
			continue
		}
		if ep.info.Allows(ref.ModelID) && ep.info.HasPrice(ref.ModelID) {
			return ep.p, nil
		}
		if ep.info.Allows(ref.ModelID) && unpriced == nil {
			unpriced = &e.list[i].info
		}
		if refused == nil {
			refused = &e.list[i].info
		}
	}
	if unpriced != nil {
		return nil, UnpricedError(unpriced.Name, ref.ModelID)
	}
	if refused != nil {
		return nil, fmt.Errorf("%w: endpoint %q does not serve model %q (models: %s)",
			ErrInvalidInput, refused.Name, ref.ModelID, strings.Join(refused.Models, ", "))
	}
	if len(names) > 0 {
		return nil, fmt.Errorf("%w: provider %q has no endpoint %q (endpoints: %s)",
			ErrInvalidInput, ref.Provider, ref.Endpoint, strings.Join(names, ", "))
	}
	var known []string
	for _, ep := range e.list {
		if !slices.Contains(known, ep.info.Provider) {
			known = append(known, ep.info.Provider)
		}
	}
	return nil, fmt.Errorf("%w: unknown model provider %q (known: %s)", ErrInvalidInput, ref.Provider, strings.Join(known, ", "))
}
