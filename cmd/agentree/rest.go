package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// apiClient talks to the gateway's REST API as one organization.
type apiClient struct {
	base string // http://host:port
	org  string
	key  string
	hc   *http.Client
}

// clientFlags are the flags every client subcommand takes, with their
// environment defaults.
type clientFlags struct {
	addr, org, key, keyFile string
	json                    bool
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func (f clientFlags) client() (*apiClient, error) {
	if f.key == "" && f.keyFile != "" {
		b, err := os.ReadFile(f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--key-file: %w", err)
		}
		f.key = strings.TrimSpace(string(b))
	}
	if f.key == "" {
		// Read here, not as the flag's default, so help never shows it.
		f.key = os.Getenv("AGENTREE_API_KEY")
	}
	if f.key == "" {
		return nil, errors.New("no API key: set AGENTREE_API_KEY or pass --key-file (make run keeps the dev key in .data/dev-key; agentree keys create --org ORG makes one)")
	}
	base := strings.TrimRight(f.addr, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	if _, err := url.Parse(base); err != nil {
		return nil, fmt.Errorf("--addr %q is not a URL", f.addr)
	}
	return &apiClient{base: base, org: f.org, key: f.key, hc: &http.Client{}}, nil
}

// apiError is the gateway's {code, message} error body.
type apiError struct {
	Status  int    `json:"-"`
	Code    any    `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	switch e.Status {
	case http.StatusUnauthorized:
		return "the API key was refused (401): check AGENTREE_API_KEY / --key-file"
	case http.StatusNotFound:
		return "not found (404): " + e.Message
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Status)
}

func (c *apiClient) url(path string) string {
	return c.base + "/api/orgs/" + url.PathEscape(c.org) + path
}

func (c *apiClient) request(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		var b []byte
		var err error
		if m, ok := body.(proto.Message); ok {
			b, err = protojson.Marshal(m)
		} else {
			b, err = json.Marshal(body)
		}
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			return nil, fmt.Errorf("cannot reach the gateway at %s (is it running? make run starts one): %v", c.base, op.Err)
		}
		return nil, err
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		ae := &apiError{Status: resp.StatusCode}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if json.Unmarshal(b, ae) != nil || ae.Message == "" {
			ae.Message = strings.TrimSpace(string(b))
		}
		return nil, ae
	}
	return resp, nil
}

// do sends a JSON request and decodes the JSON answer into out. Bodies
// that are API messages (proto/agentree/v1) go through protojson, the
// gateway's own encoding; fields a newer gateway adds are skipped.
func (c *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if m, ok := out.(proto.Message); ok {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("read the answer to %s %s: %w", method, path, err)
		}
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, m); err != nil {
			return fmt.Errorf("decode the answer to %s %s: %w", method, path, err)
		}
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// compactJSON renders an API message as one line of JSON, for --json
// output that scripts (and grep) can rely on: protojson varies its spacing
// on purpose.
func compactJSON(m proto.Message) json.RawMessage {
	b, err := protojson.Marshal(m)
	if err != nil {
		return json.RawMessage(`null`)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID, Event string
	Data      json.RawMessage
}

// stream follows an execution's consolidated stream, resuming after
// lastID, and calls fn for every event until fn returns done, the stream
// ends, or ctx ends.
func (c *apiClient) stream(ctx context.Context, execID, lastID string, fn func(sseEvent) (done bool)) (string, error) {
	path := "/agent-executions/" + url.PathEscape(execID) + "/stream/consolidated"
	if lastID != "" {
		path += "?lastEventId=" + url.QueryEscape(lastID)
	}
	resp, err := c.request(ctx, http.MethodGet, path, nil)
	if err != nil {
		return lastID, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event != "" || len(ev.Data) > 0 {
				if ev.ID != "" {
					lastID = ev.ID
				}
				if fn(ev) {
					return lastID, nil
				}
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			ev.ID = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "event:"):
			ev.Event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			ev.Data = append(ev.Data, strings.TrimPrefix(line[5:], " ")...)
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return lastID, err
	}
	return lastID, ctx.Err()
}
