package gateway

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
)

// The MCP server (README "MCP"): every definition that opts in
// (expose.mcp) is a tool run_{slug} of its organization's endpoint
// POST /mcp/{org}, served by the official Go SDK in stateless mode. One
// endpoint per organization, not per definition, because an MCP client
// is configured with one server and picks among its tools: an IDE lists
// an organization's agents as it lists a server's tools. Callers
// authenticate with the organization's API key as a bearer token, as on
// the REST API; listing the tools needs read, calling one run.

// mcpToolPrefix names a definition's tool: run_{slug}.
const mcpToolPrefix = "run_"

// mcpCallerKey is the context key of the request's mcpServer.
type mcpCallerKey struct{}

// mcpHandler serves the MCP routes. The SDK's handler serves the
// protocol; the organization's server (its tools) is built per request,
// after the caller is authenticated, so a stateless request sees the
// definitions as they are now.
func (s *service) mcpHandler() http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, _ := r.Context().Value(mcpCallerKey{}).(*mcp.Server)
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, Logger: s.log,
		// The SDK refuses a request that reaches a loopback address with
		// another Host, against DNS rebinding of unauthenticated local
		// servers. Every request here is authenticated with an API key
		// before the SDK sees it, and a gateway behind a reverse proxy on
		// its own host receives exactly such requests.
		DisableLocalhostProtection: true})
	mux := http.NewServeMux()
	// Every method of the endpoint is authenticated first; the SDK then
	// answers GET and DELETE (sessionless) with 405.
	mux.HandleFunc("/mcp/{org}", func(w http.ResponseWriter, r *http.Request) {
		r, ok := s.withCaller(w, r)
		if !ok {
			return
		}
		srv, err := s.mcpServer(r.Context(), r.PathValue("org"))
		if err != nil {
			writeStatus(w, err)
			return
		}
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpCallerKey{}, srv)))
	})
	mux.HandleFunc("/mcp/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no MCP route "+r.Method+" "+r.URL.Path+
			": an organization's MCP endpoint is POST /mcp/{org} (streamable HTTP, stateless)")
	})
	return mux
}

// mcpServer is the MCP server of organization org as the caller sees it:
// a tool per definition exposed over MCP. Another organization is a 404
// exactly as an unknown one, and a key without the read role a 403.
func (s *service) mcpServer(ctx context.Context, org string) (*mcp.Server, error) {
	o, err := s.authorize(ctx, org)
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "no MCP endpoint for organization %q", org)
	}
	k, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	if !k.Has(entrystore.RoleRead) {
		return nil, status.Error(codes.PermissionDenied,
			(&permissionDenied{role: entrystore.RoleRead, what: "listing MCP tools"}).Error())
	}
	defs, err := s.mcpDefinitions(ctx, o.ID)
	if err != nil {
		return nil, err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentree", Title: "Agentree: " + o.Slug, Version: "1"},
		&mcp.ServerOptions{Logger: s.log,
			Instructions: "Each tool runs an Agentree agent durably and returns its answer; pass executionId to continue a conversation that waits for input."})
	for _, d := range defs {
		a := a2aAgent{org: o, key: k, def: d}
		mcp.AddTool(srv, &mcp.Tool{Name: mcpToolPrefix + d.Slug, Title: d.Name, Description: mcpDescription(d)},
			func(ctx context.Context, req *mcp.CallToolRequest, in mcpCallInput) (*mcp.CallToolResult, mcpCallOutput, error) {
				// The service methods find the caller in the context, as
				// for a REST request.
				ctx = context.WithValue(context.WithValue(ctx, authenticatedOrg{}, o), authenticatedKey{}, k)
				return s.mcpCall(ctx, a, req, in)
			})
	}
	return srv, nil
}

// mcpDefinitions is the organization's definitions exposed over MCP, all
// of them: a client lists its tools once, so the list is not paged.
func (s *service) mcpDefinitions(ctx context.Context, orgID string) ([]entrystore.Definition, error) {
	var out []entrystore.Definition
	p := entrystore.Page{Limit: 100}
	for {
		ds, next, err := s.es.ListDefinitions(ctx, orgID, p)
		if err != nil {
			return nil, toStatus(s.log, "list agent definitions", err)
		}
		for _, d := range ds {
			if d.ExposeMCP {
				out = append(out, d)
			}
		}
		if next == "" {
			return out, nil
		}
		p.Cursor = next
	}
}

// mcpDescription is a tool's description: the definition's, and how the
// tool is called.
func mcpDescription(d entrystore.Definition) string {
	desc := d.Description
	if desc == "" {
		desc = fmt.Sprintf("Runs the Agentree agent %q.", d.Name)
	}
	return desc + "\n\nSend the task as message; the result is the agent's answer. When the agent waits for input " +
		"(status WAITING), call again with the same executionId and your reply as message."
}
