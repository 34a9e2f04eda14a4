package mcp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentree/agentree/agentsdk"
)

// rawJSON marshals as itself, so arguments reach the server as the model
// wrote them.
type rawJSON = json.RawMessage

// output is what the model reads of res: its contents, text as is and
// others described, one per line; structured content when there is no
// other. An isError result is returned as the error.
func output(res *sdk.CallToolResult) (string, error) {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *sdk.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				parts = append(parts, r.Text)
			default:
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes]", r.URI, len(r.Blob)))
			}
		default:
			b, _ := c.MarshalJSON()
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			parts = append(parts, string(b))
		}
	}
	out := strings.Join(parts, "\n")
	if res.IsError {
		return "", errors.New(cmp.Or(out, "the tool reported an error and said nothing more"))
	}
	return out, nil
}

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
