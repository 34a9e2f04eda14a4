package openai

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// Options configure a Provider: one endpoint, its URL and key fixed when
// the Provider is made. The zero value calls api.openai.com with the key
// in $OPENAI_API_KEY. Base URL and key come from here only; the SDK's
// other environment settings (OPENAI_ORG_ID, OPENAI_PROJECT_ID) still
// apply.
type Options struct {
	// Name is the provider name requests are routed by (ModelRef.Provider)
	// and the Provider stamped on answers; "" = "openai".
	Name string
	// Endpoint is the endpoint's name, which ModelRef.Endpoint picks;
	// "" = Name. Name an OpenAI-compatible server for what it is, e.g.
	// "ollama".
	Endpoint string
	// Models are the model IDs the endpoint serves; nil = any ("*").
	Models []string
	// BaseURL is the API's address, e.g. http://localhost:11434/v1 for
	// Ollama; "" = https://api.openai.com/v1.
	BaseURL string
	// APIKey is the key itself; "" = read it from APIKeyEnv, once, in New.
	APIKey string
	// APIKeyEnv names the environment variable that holds the key;
	// "" = OPENAI_API_KEY for api.openai.com, none for another BaseURL.
	// Only api.openai.com requires a key.
	APIKeyEnv string
	// HTTPClient sends the requests; nil = http.DefaultClient. Each call is
	// bounded by its context, not by a client timeout.
	HTTPClient *http.Client
	// Prices override the built-in price table, by model ID.
	Prices map[string]agentsdk.Price
}

// Provider calls OpenAI's or an OpenAI-compatible server's models at one
// endpoint. It is safe for concurrent use.
type Provider struct {
	opts   Options
	prices *providerkit.Prices
	client openai.Client
	// official is true for api.openai.com, which takes
	// max_completion_tokens where compatible servers take max_tokens.
	official bool
	// noKey is the error every call returns when the official API has no
	// key: it refuses every call without one.
	noKey error
}

var (
	_ agentsdk.Provider          = (*Provider)(nil)
	_ agentsdk.EndpointDescriber = (*Provider)(nil)
)

// New returns a Provider for opts, with opts' defaults filled in. It reads
// the key and builds the one SDK client every call uses: the URL and key
// never change afterwards.
func New(opts Options) (*Provider, error) {
	if opts.Name == "" {
		opts.Name = "openai"
	}
	if err := providerkit.CheckName(opts.Name); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	opts.Endpoint = cmp.Or(opts.Endpoint, opts.Name)
	if opts.Models == nil {
		opts.Models = []string{agentsdk.AnyModel}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	base, err := providerkit.ParseBaseURL(cmp.Or(opts.BaseURL, "https://api.openai.com/v1"))
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	prices, err := providerkit.NewPrices(builtinPrices, opts.Prices, dateSuffix)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	p := &Provider{opts: opts, prices: prices, official: base.Host == "api.openai.com"}
	key, env, noKey := providerkit.Key(opts.APIKey, opts.APIKeyEnv, "OPENAI_API_KEY", p.official)
	p.opts.APIKeyEnv, p.noKey = env, noKey
	// Base URL and key are always set, so the SDK's own environment
	// defaults (OPENAI_BASE_URL, OPENAI_API_KEY) never override Options.
	p.client = openai.NewClient(
		option.WithBaseURL(base.String()),
		option.WithAPIKey(key),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithMaxRetries(0), // Temporal owns retries.
	)
	return p, nil
}

// PricedModels are the model IDs the Provider prices (the built-in table
// and Options.Prices); a dated ID is priced by its alias.
func (p *Provider) PricedModels() []string { return p.prices.IDs() }

// Name is the provider name, Options.Name.
func (p *Provider) Name() string { return p.opts.Name }

// Endpoint describes the endpoint the Provider calls, without its URL or
// key.
func (p *Provider) Endpoint() agentsdk.EndpointInfo {
	return agentsdk.EndpointInfo{Name: p.opts.Endpoint, Provider: p.opts.Name, Models: slices.Clone(p.opts.Models)}
}

// Stream sends req and streams the answer to onEvent (which may be nil),
// returning the whole assistant message. Failures are *agentsdk.ModelError,
// except that a cancelled ctx returns ctx's error.
func (p *Provider) Stream(ctx context.Context, req agentsdk.ModelRequest, onEvent agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	if onEvent == nil {
		onEvent = func(agentsdk.StreamEvent) {}
	}
	if p.noKey != nil {
		return agentsdk.ModelResponse{}, providerkit.Invalid(p.opts.Name, p.noKey)
	}
	params, err := params(req, p.official)
	if err != nil {
		return agentsdk.ModelResponse{}, providerkit.Invalid(p.opts.Name, err)
	}
	acc := newAccumulator(onEvent)
	if err := providerkit.Drain(ctx, p.client.Chat.Completions.NewStreaming(ctx, params), acc.add); err != nil {
		return agentsdk.ModelResponse{}, p.modelError(ctx, err)
	}
	if acc.finish == "" {
		return agentsdk.ModelResponse{}, providerkit.Broken(p.opts.Name, "stream ended before a finish_reason")
	}
	return providerkit.Answer(p.opts.Name, req.Model, p.prices, acc.message()), nil
}
