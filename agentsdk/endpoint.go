package agentsdk

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
