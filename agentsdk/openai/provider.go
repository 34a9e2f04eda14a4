package openai

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// Options configure a Provider. The zero value calls api.openai.com with
// the key in $OPENAI_API_KEY. Base URL and key come from here only; the
// SDK's other environment settings (OPENAI_ORG_ID, OPENAI_PROJECT_ID)
// still apply.
type Options struct {
	// Name is the provider name requests are routed by (ModelRef.Provider)
	// and the Provider stamped on answers; "" = "openai". Name an
	// OpenAI-compatible server for what it is, e.g. "ollama".
	Name string
	// BaseURL is the API's address, e.g. http://localhost:11434/v1 for
	// Ollama; "" = https://api.openai.com/v1.
	BaseURL string
	// APIKey is the key itself; "" = read it from APIKeyEnv.
	APIKey string
	// APIKeyEnv names the environment variable that holds the key;
	// "" = OPENAI_API_KEY. Only api.openai.com requires a key.
	APIKeyEnv string
	// HTTPClient sends the requests; nil = http.DefaultClient. Each call is
	// bounded by its context, not by a client timeout.
	HTTPClient *http.Client
	// Prices override the built-in price table, by model ID. A
	// ModelRef.Price overrides both.
	Prices map[string]agentsdk.Price
}

// Provider calls OpenAI's or an OpenAI-compatible server's models. It is
// safe for concurrent use.
type Provider struct {
	opts    Options
	prices  *providerkit.Prices
	clients providerkit.Cache[*client]
}

var _ agentsdk.Provider = (*Provider)(nil)

type client struct {
	openai.Client
	// official is true for api.openai.com, which takes
	// max_completion_tokens where compatible servers take max_tokens.
	official bool
}

// New returns a Provider for opts, with opts' defaults filled in.
func New(opts Options) (*Provider, error) {
	if opts.Name == "" {
		opts.Name = "openai"
	}
	if err := providerkit.CheckName(opts.Name); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if opts.APIKeyEnv == "" {
		opts.APIKeyEnv = "OPENAI_API_KEY"
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if _, err := parseBaseURL(opts.BaseURL); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	prices, err := providerkit.NewPrices(builtinPrices, opts.Prices, dateSuffix)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return &Provider{opts: opts, prices: prices}, nil
}

// Name is the provider name, Options.Name.
func (p *Provider) Name() string { return p.opts.Name }

// client returns the SDK client for ref's endpoint and key, building it on
// first use. The key is read from the environment then.
func (p *Provider) client(ref agentsdk.ModelRef) (*client, error) {
	return p.clients.Get(providerkit.ClientKey(ref), func() (*client, error) {
		base, err := parseBaseURL(cmp.Or(ref.BaseURL, p.opts.BaseURL))
		if err != nil {
			return nil, err
		}
		key, env := providerkit.APIKey(p.opts.APIKey, p.opts.APIKeyEnv, ref.APIKeyEnv)
		official := base.Host == "api.openai.com"
		if key == "" && official {
			return nil, providerkit.MissingKey(env)
		}
		// Base URL and key are always set, so the SDK's own environment
		// defaults (OPENAI_BASE_URL, OPENAI_API_KEY) never override Options.
		return &client{official: official, Client: openai.NewClient(
			option.WithBaseURL(base.String()),
			option.WithAPIKey(key),
			option.WithHTTPClient(p.opts.HTTPClient),
			option.WithMaxRetries(0), // Temporal owns retries.
		)}, nil
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
	params, err := params(req, c.official)
	if err != nil {
		return agentsdk.ModelResponse{}, providerkit.Invalid(p.opts.Name, err)
	}
	acc := newAccumulator(onEvent)
	if err := providerkit.Drain(ctx, c.Chat.Completions.NewStreaming(ctx, params), acc.add); err != nil {
		return agentsdk.ModelResponse{}, p.modelError(ctx, err)
	}
	if acc.finish == "" {
		return agentsdk.ModelResponse{}, providerkit.Broken(p.opts.Name, "stream ended before a finish_reason")
	}
	return providerkit.Answer(p.opts.Name, req.Model, p.prices, acc.message()), nil
}

// parseBaseURL checks s, "" meaning the official API.
func parseBaseURL(s string) (*url.URL, error) {
	return providerkit.ParseBaseURL(cmp.Or(s, "https://api.openai.com/v1"))
}
