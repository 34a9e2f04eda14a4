package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentree/agentree/apiclient"
)

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

// client is the REST client the flags name: the key from --key-file, else
// AGENTREE_API_KEY (read here, not as a flag default, so help never shows
// it).
func (f clientFlags) client() (*apiclient.Client, error) {
	if f.key == "" && f.keyFile != "" {
		b, err := os.ReadFile(f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--key-file: %w", err)
		}
		f.key = strings.TrimSpace(string(b))
	}
	if f.key == "" {
		f.key = os.Getenv("AGENTREE_API_KEY")
	}
	if f.key == "" {
		return nil, errors.New("no API key: set AGENTREE_API_KEY or pass --key-file (make run keeps the dev key in .data/dev-key; agentree keys create --org ORG makes one)")
	}
	c, err := apiclient.New(f.addr, f.org, f.key)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", f.addr, err)
	}
	return c, nil
}

// explain says an error for a person at a terminal: what to do about a
// refused key or a gateway that is not there.
func explain(err error) string {
	switch {
	case errors.Is(err, apiclient.ErrUnreachable):
		return err.Error() + " (is it running? make run starts one)"
	case apiclient.StatusOf(err) == http.StatusUnauthorized:
		return err.Error() + ": check AGENTREE_API_KEY / --key-file"
	}
	return err.Error()
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
