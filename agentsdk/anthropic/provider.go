package anthropic

import (
	"cmp"
	"context"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// DefaultMaxTokens is the max_tokens sent when a request sets none: the
// API requires one.
const DefaultMaxTokens = 4096

// Options configure a Provider. The zero value calls api.anthropic.com with
// the key in $ANTHROPIC_API_KEY.
type Options struct {
	// Name is the provider name requests are routed by (ModelRef.Provider)
	// and the Provider stamped on answers; "" = "anthropic".
	Name string
	// BaseURL is the API's address; "" = https://api.anthropic.com.
	BaseURL string
	// APIKey is the key itself; "" = read it from APIKeyEnv.
	APIKey string
	// APIKeyEnv names the environment variable that holds the key;
	// "" = ANTHROPIC_API_KEY.
	APIKeyEnv string
	// HTTPClient sends the requests; nil = http.DefaultClient. Each call is
	// bounded by its context, not by a client timeout.
	HTTPClient *http.Client
	// Prices override the built-in price table, by model ID. A
	// ModelRef.Price overrides both.
	Prices map[string]agentsdk.Price
}

// Provider calls Anthropic's models. It is safe for concurrent use.
type Provider struct {
	opts    Options
	prices  *providerkit.Prices
	clients providerkit.Cache[*anthropic.Client]
}

var _ agentsdk.Provider = (*Provider)(nil)

// New returns a Provider for opts, with opts' defaults filled in.
func New(opts Options) (*Provider, error) {
	if opts.Name == "" {
		opts.Name = "anthropic"
	}
	if err := providerkit.CheckName(opts.Name); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	if opts.APIKeyEnv == "" {
		opts.APIKeyEnv = "ANTHROPIC_API_KEY"
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if err := checkBaseURL(opts.BaseURL); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	prices, err := providerkit.NewPrices(builtinPrices, opts.Prices, dateSuffix)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	return &Provider{opts: opts, prices: prices}, nil
}

// Name is the provider name, Options.Name.
func (p *Provider) Name() string { return p.opts.Name }

// client returns the SDK client for ref's endpoint and key, building it on
// first use. The key is read from the environment then.
func (p *Provider) client(ref agentsdk.ModelRef) (*anthropic.Client, error) {
	return p.clients.Get(providerkit.ClientKey(ref), func() (*anthropic.Client, error) {
		if err := checkBaseURL(ref.BaseURL); err != nil {
			return nil, err
		}
		key, env := providerkit.APIKey(p.opts.APIKey, p.opts.APIKeyEnv, ref.APIKeyEnv)
		if key == "" {
			return nil, providerkit.MissingKey(env)
		}
		opts := []option.RequestOption{
			option.WithoutEnvironmentDefaults(),
			option.WithAPIKey(key),
			option.WithHTTPClient(p.opts.HTTPClient),
			option.WithMaxRetries(0), // Temporal owns retries.
		}
		if base := cmp.Or(ref.BaseURL, p.opts.BaseURL); base != "" {
			opts = append(opts, option.WithBaseURL(base))
		}
		c := anthropic.NewClient(opts...)
		return &c, nil
	})
}

// Stream sends req and streams the answer to onEvent (which may be nil),
// returning the whole assistant message. Failures are *agentsdk.ModelError,
// except that a cancelled ctx returns ctx's error.
func (p *Provider) Stream(ctx context.Context, req agentsdk.ModelRequest, onEvent agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	if onEvent == nil {
		onEvent = func(agentsdk.StreamEvent) {}
	}
	c, err := p.client(req.Model)
	if err != nil {
		return agentsdk.ModelResponse{}, providerkit.Invalid(p.opts.Name, err)
	}
	params, err := p.params(req)
	if err != nil {
		return agentsdk.ModelResponse{}, providerkit.Invalid(p.opts.Name, err)
	}
	acc := newAccumulator(onEvent)
	if err := providerkit.Drain(ctx, c.Messages.NewStreaming(ctx, params), acc.add); err != nil {
		return agentsdk.ModelResponse{}, p.modelError(ctx, err)
	}
	if !acc.done {
		return agentsdk.ModelResponse{}, providerkit.Broken(p.opts.Name, "stream ended before message_stop")
	}
	return providerkit.Answer(p.opts.Name, req.Model, p.prices, acc.message()), nil
}

// checkBaseURL checks an overriding base URL; "" leaves the SDK's default.
func checkBaseURL(s string) error {
	if s == "" {
		return nil
	}
	_, err := providerkit.ParseBaseURL(s)
	return err
}
