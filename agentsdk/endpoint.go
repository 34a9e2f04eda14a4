package agentsdk

import (
	"fmt"
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
	var refused *EndpointInfo
	for i, ep := range e.list {
		if ep.info.Provider != ref.Provider {
			continue
		}
		names = append(names, ep.info.Name)
		if ref.Endpoint != "" && ref.Endpoint != ep.info.Name {
			continue
		}
		if ep.info.Allows(ref.ModelID) {
			return ep.p, nil
		}
		if refused == nil {
			refused = &e.list[i].info
		}
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
