package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentree/agentree/agentsdk"
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
	opts   Options
	prices map[string]agentsdk.Price

	mu      sync.Mutex
	clients map[clientKey]*client
}

var _ agentsdk.Provider = (*Provider)(nil)

// clientKey is what a request may override; one SDK client serves each.
type clientKey struct{ baseURL, keyEnv string }

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
	if strings.ContainsAny(opts.Name, "/ ") {
		return nil, fmt.Errorf("openai: %w: name %q holds '/' or a space", agentsdk.ErrInvalidInput, opts.Name)
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
	prices, err := mergePrices(opts.Prices)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return &Provider{opts: opts, prices: prices, clients: map[clientKey]*client{}}, nil
}

// Name is the provider name, Options.Name.
func (p *Provider) Name() string { return p.opts.Name }

// client returns the SDK client for ref's endpoint and key, building it on
// first use. The key is read from the environment then.
func (p *Provider) client(ref agentsdk.ModelRef) (*client, error) {
	k := clientKey{baseURL: ref.BaseURL, keyEnv: ref.APIKeyEnv}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[k]; ok {
		return c, nil
	}
	base, err := parseBaseURL(firstNonEmpty(k.baseURL, p.opts.BaseURL))
	if err != nil {
		return nil, err
	}
	key, env := p.opts.APIKey, p.opts.APIKeyEnv
	if k.keyEnv != "" {
		key, env = "", k.keyEnv
	}
	if key == "" {
		key = os.Getenv(env)
	}
	official := base.Host == "api.openai.com"
	if key == "" && official {
		return nil, fmt.Errorf("%w: no API key: $%s is empty", agentsdk.ErrInvalidInput, env)
	}
	// Base URL and key are always set, so the SDK's own environment
	// defaults (OPENAI_BASE_URL, OPENAI_API_KEY) never override Options.
	c := &client{official: official, Client: openai.NewClient(
		option.WithBaseURL(base.String()),
		option.WithAPIKey(key),
		option.WithHTTPClient(p.opts.HTTPClient),
		option.WithMaxRetries(0), // Temporal owns retries.
	)}
	p.clients[k] = c
	return c, nil
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
		return agentsdk.ModelResponse{}, p.invalid(err)
	}
	params, err := params(req, c.official)
	if err != nil {
		return agentsdk.ModelResponse{}, p.invalid(err)
	}
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	acc := newAccumulator(onEvent)
	for stream.Next() {
		acc.add(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return agentsdk.ModelResponse{}, p.modelError(ctx, err)
	}
	if ctx.Err() != nil {
		return agentsdk.ModelResponse{}, ctx.Err()
	}
	if acc.finish == "" {
		return agentsdk.ModelResponse{}, p.brokenStream()
	}
	msg := acc.message()
	msg.Provider, msg.Model = p.opts.Name, req.Model.ModelID
	if price, ok := p.price(req.Model); ok {
		msg.Usage.Cost = price.Cost(*msg.Usage)
	}
	return agentsdk.ModelResponse{Message: msg}, nil
}

// parseBaseURL checks s, "" meaning the official API.
func parseBaseURL(s string) (*url.URL, error) {
	if s == "" {
		s = "https://api.openai.com/v1"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL %q is not an http(s) URL", agentsdk.ErrInvalidInput, s)
	}
	return u, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
