package anthropic

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// DefaultMaxTokens is the max_tokens sent when a request sets none: the
// API requires one.
const DefaultMaxTokens = 4096

// Options configure a Provider: one endpoint, its URL and key fixed when
// the Provider is made. The zero value calls api.anthropic.com with the
// key in $ANTHROPIC_API_KEY.
type Options struct {
	// Name is the provider name requests are routed by (ModelRef.Provider)
	// and the Provider stamped on answers; "" = "anthropic".
	Name string
	// Endpoint is the endpoint's name, which ModelRef.Endpoint picks;
	// "" = Name.
	Endpoint string
	// Models are the model IDs the endpoint serves; nil = any ("*").
	Models []string
	// BaseURL is the API's address; "" = https://api.anthropic.com.
	BaseURL string
	// APIKey is the key itself; "" = read it from APIKeyEnv, once, in New.
	APIKey string
	// APIKeyEnv names the environment variable that holds the key;
	// "" = ANTHROPIC_API_KEY for api.anthropic.com, none for another
	// BaseURL (which then receives no key unless APIKey gives one).
	APIKeyEnv string
	// HTTPClient sends the requests; nil = http.DefaultClient. Each call is
	// bounded by its context, not by a client timeout.
	HTTPClient *http.Client
	// Prices override the built-in price table, by model ID.
	Prices map[string]agentsdk.Price
}

// Provider calls Anthropic's models at one endpoint. It is safe for
// concurrent use.
type Provider struct {
	opts   Options
	prices *providerkit.Prices
	client anthropic.Client
	// noKey is the error every call returns when the endpoint has no key:
	// the API refuses every call without one.
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
		opts.Name = "anthropic"
	}
	if err := providerkit.CheckName(opts.Name); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	opts.Endpoint = cmp.Or(opts.Endpoint, opts.Name)
	if opts.Models == nil {
		opts.Models = []string{agentsdk.AnyModel}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	base, err := providerkit.ParseBaseURL(cmp.Or(opts.BaseURL, officialURL))
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	prices, err := providerkit.NewPrices(builtinPrices, opts.Prices, dateSuffix)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	p := &Provider{opts: opts, prices: prices}
	// The same rule as openai's: only Anthropic's own API gets
	// $ANTHROPIC_API_KEY unasked.
	key, env, noKey := providerkit.Key(opts.APIKey, opts.APIKeyEnv, "ANTHROPIC_API_KEY", base.Host == officialHost)
	p.opts.APIKeyEnv, p.noKey = env, noKey
	co := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(key),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithMaxRetries(0), // Temporal owns retries.
	}
	if opts.BaseURL != "" {
		co = append(co, option.WithBaseURL(opts.BaseURL))
	}
	p.client = anthropic.NewClient(co...)
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
	params, err := p.params(req)
	if err != nil {
		return agentsdk.ModelResponse{}, providerkit.Invalid(p.opts.Name, err)
	}
	acc := newAccumulator(onEvent)
	if err := providerkit.Drain(ctx, p.client.Messages.NewStreaming(ctx, params), acc.add); err != nil {
		return agentsdk.ModelResponse{}, p.modelError(ctx, err)
	}
	if !acc.done {
		return agentsdk.ModelResponse{}, providerkit.Broken(p.opts.Name, "stream ended before message_stop")
	}
	return providerkit.Answer(p.opts.Name, req.Model, p.prices, acc.message()), nil
}

// officialURL is Anthropic's own API, whose host alone gets
// $ANTHROPIC_API_KEY by default.
const (
	officialURL  = "https://api.anthropic.com"
	officialHost = "api.anthropic.com"
)
