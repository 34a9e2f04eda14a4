package mcp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentree/agentree/agentsdk"
)

// offered are the server's tools as agentsdk tools. A tool whose input
// schema agentsdk cannot compile is left out, with a warning: a server
// should not stop the worker for one tool.
func (s *server) offered() []*agentsdk.Tool {
	var out []*agentsdk.Tool
	taken := map[string]bool{}
	for _, t := range s.listed {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || bytes.Equal(schema, []byte("null")) {
			schema = []byte(`{"type":"object"}`)
		}
		name := ToolName(s.cfg.Name, t.Name)
		if taken[name] {
			name = hashed(name, s.cfg.Name+"\x00"+t.Name)
		}
		tool, remote := &agentsdk.Tool{Name: name, Description: cmp.Or(t.Description, t.Title), Parameters: schema}, t.Name
		tool.Run = func(ctx context.Context, call agentsdk.ToolInvocation) (string, error) {
			return s.call(ctx, remote, call.Arguments)
		}
		if _, err := agentsdk.NewTools(tool); err != nil {
			s.log.Warn("MCP tool left out: its input schema is not usable", "tool", t.Name, "error", err)
			continue
		}
		taken[name] = true
		out = append(out, tool)
	}
	return out
}

// maxToolName is the longest tool name Anthropic's and OpenAI's APIs take.
const maxToolName = 64

var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ToolName is the name under which server's tool is offered:
// <server>__<tool>, with any character providers refuse replaced by '_',
// and cut to 64 characters with a hash of the whole when longer.
func ToolName(server, tool string) string {
	name := server + Separator + notInName.ReplaceAllString(tool, "_")
	if len(name) <= maxToolName {
		return name
	}
	return hashed(name, server+"\x00"+tool)
}

// hashed cuts name to leave room for a short hash of whole.
func hashed(name, whole string) string {
	sum := sha256.Sum256([]byte(whole))
	h := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), maxToolName-len(h))] + h
}

// toolsDiff says how now differs from was, by tool: added, removed or
// changed (description or schema); "" when alike.
func toolsDiff(was, now []*sdk.Tool) string {
	key := func(t *sdk.Tool) string {
		b, _ := json.Marshal(struct {
			D string
			S any
		}{t.Description, t.InputSchema})
		return string(b)
	}
	old := map[string]string{}
	for _, t := range was {
		old[t.Name] = key(t)
	}
	var changes []string
	for _, t := range now {
		k, ok := old[t.Name]
		switch {
		case !ok:
			changes = append(changes, "added "+t.Name)
		case k != key(t):
			changes = append(changes, "changed "+t.Name)
		}
		delete(old, t.Name)
	}
	for _, t := range was {
		if _, ok := old[t.Name]; ok {
			changes = append(changes, "removed "+t.Name)
		}
	}
	return strings.Join(changes, ", ")
}
