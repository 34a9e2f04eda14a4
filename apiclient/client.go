package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Client talks to one gateway as one organization with one API key. It is
// safe for concurrent use.
type Client struct {
	base string // scheme://host:port, no trailing slash
	org  string
	key  string
	hc   *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests with hc (its transport, TLS settings and
// timeout); the default is a client without a timeout, as streams are
// long.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// New returns a client of the gateway at addr ("host:port" or a URL) for
// the organization org (its slug or ID), authenticating with key.
func New(addr, org, key string, opts ...Option) (*Client, error) {
	base := strings.TrimRight(strings.TrimSpace(addr), "/")
	if base == "" {
		return nil, errors.New("apiclient: no gateway address")
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("apiclient: gateway address %q is not an http(s) URL or host:port", addr)
	}
	if org == "" {
		return nil, errors.New("apiclient: no organization")
	}
	if key == "" {
		return nil, errors.New("apiclient: no API key")
	}
	c := &Client{base: base, org: org, key: key, hc: &http.Client{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Base is the gateway's URL.
func (c *Client) Base() string { return c.base }

// Org is the organization the client acts for.
func (c *Client) Org() string { return c.org }

// ErrUnreachable is a request that never reached the gateway: nothing
// listens at its address, or the connection failed.
var ErrUnreachable = errors.New("cannot reach the gateway")

// Error is a request the gateway refused, or answered with an error: its
// HTTP status, the API's error code (invalid_argument, not_found,
// permission_denied, quota_exceeded, ...) and message, and for a 429 or
// 503 how long to wait before trying again.
type Error struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Status == http.StatusUnauthorized {
		return fmt.Sprintf("the API key was refused: %s (401)", e.Message)
	}
	if e.Code == "" {
		return fmt.Sprintf("gateway answered %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code)
}

// CodeOf is the API error code of err ("" when err is not an *Error).
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// StatusOf is the HTTP status of err (0 when err is not an *Error).
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// CallOption sets something on one request.
type CallOption func(*http.Request)

// IdempotencyKey sends the Idempotency-Key header: a retry of a mutating
// request with the same key gets the first answer and changes nothing.
func IdempotencyKey(key string) CallOption {
	return func(r *http.Request) { r.Header.Set("Idempotency-Key", key) }
}

// URL is the URL of path under the organization's API root
// (/api/orgs/{org}); path starts with "/".
func (c *Client) URL(path string) string {
	return c.base + "/api/orgs/" + url.PathEscape(c.org) + path
}

// Do sends method path (under /api/orgs/{org}) with in as its JSON body
// (nil for none) and decodes the answer into out (nil to drop it). in and
// out may be API messages, encoded with protojson, or any value
// encoding/json takes.
func (c *Client) Do(ctx context.Context, method, path string, in, out any, opts ...CallOption) error {
	resp, err := c.send(ctx, method, c.URL(path), in, opts...)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("apiclient: reading the answer to %s %s: %w", method, path, err)
	}
	if m, ok := out.(proto.Message); ok {
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(raw, m)
	} else {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		return fmt.Errorf("apiclient: decoding the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// send makes one request and turns an error answer into an *Error; the
// caller closes a successful answer's body.
func (c *Client) send(ctx context.Context, method, u string, in any, opts ...CallOption) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		var raw []byte
		var err error
		if m, ok := in.(proto.Message); ok {
			raw, err = protojson.Marshal(m)
		} else {
			raw, err = json.Marshal(in)
		}
		if err != nil {
			return nil, fmt.Errorf("apiclient: encoding the request: %w", err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("apiclient: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && ctx.Err() == nil {
			return nil, fmt.Errorf("apiclient: %w at %s: %w", ErrUnreachable, c.base, op.Err)
		}
		return nil, fmt.Errorf("apiclient: %w", err)
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, errorOf(resp)
}

// errorOf reads an error answer: the API's {code, message}, or the body's
// text when a proxy in between answered.
func errorOf(resp *http.Response) *Error {
	e := &Error{Status: resp.StatusCode}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Message != "" {
		e.Message = body.Message
		switch code := body.Code.(type) {
		case string:
			e.Code = code
		case float64: // a gRPC status number, from a proxy of the gRPC API
			e.Code = strconv.Itoa(int(code))
		}
	} else {
		e.Message = strings.TrimSpace(string(raw))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
	}
	return e
}
