package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agentree/agentree/agentsdk"
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
	opts   Options
	prices map[string]agentsdk.Price

	mu      sync.Mutex
	clients map[clientKey]*anthropic.Client
}

var _ agentsdk.Provider = (*Provider)(nil)

// clientKey is what a request may override; one SDK client serves each.
type clientKey struct{ baseURL, keyEnv string }

// New returns a Provider for opts, with opts' defaults filled in.
func New(opts Options) (*Provider, error) {
	if opts.Name == "" {
		opts.Name = "anthropic"
	}
	if strings.ContainsAny(opts.Name, "/ ") {
		return nil, fmt.Errorf("anthropic: %w: name %q holds '/' or a space", agentsdk.ErrInvalidInput, opts.Name)
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
	prices, err := mergePrices(opts.Prices)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	return &Provider{opts: opts, prices: prices, clients: map[clientKey]*anthropic.Client{}}, nil
}

// Name is the provider name, Options.Name.
func (p *Provider) Name() string { return p.opts.Name }

// client returns the SDK client for ref's endpoint and key, building it on
// first use. The key is read from the environment then.
func (p *Provider) client(ref agentsdk.ModelRef) (*anthropic.Client, error) {
	k := clientKey{baseURL: ref.BaseURL, keyEnv: ref.APIKeyEnv}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[k]; ok {
		return c, nil
	}
	if err := checkBaseURL(k.baseURL); err != nil {
		return nil, err
	}
	key, env := p.opts.APIKey, p.opts.APIKeyEnv
	if k.keyEnv != "" {
		key, env = "", k.keyEnv
	}
	if key == "" {
		key = os.Getenv(env)
	}
	if key == "" {
		return nil, fmt.Errorf("%w: no API key: $%s is empty", agentsdk.ErrInvalidInput, env)
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(key),
		option.WithHTTPClient(p.opts.HTTPClient),
		option.WithMaxRetries(0), // Temporal owns retries.
	}
	if base := firstNonEmpty(k.baseURL, p.opts.BaseURL); base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	c := anthropic.NewClient(opts...)
	p.clients[k] = &c
	return &c, nil
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
	params, err := p.params(req)
	if err != nil {
		return agentsdk.ModelResponse{}, p.invalid(err)
	}
	stream := c.Messages.NewStreaming(ctx, params)
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
	if !acc.done {
		return agentsdk.ModelResponse{}, p.brokenStream()
	}
	msg := acc.message()
	msg.Provider, msg.Model = p.opts.Name, req.Model.ModelID
	if price, ok := p.price(req.Model); ok {
		msg.Usage.Cost = price.Cost(*msg.Usage)
	}
	return agentsdk.ModelResponse{Message: msg}, nil
}

func checkBaseURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: base URL %q is not an http(s) URL", agentsdk.ErrInvalidInput, s)
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
