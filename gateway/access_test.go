package gateway_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// TestEveryRPCHasADeclaration: every RPC of the service has a route and
// an access declaration; what changes state declares how it honours
// Idempotency-Key and what does not declares nothing; the declared roles
// are exactly the roles keys carry.
func TestEveryRPCHasADeclaration(t *testing.T) {
	routes, err := gateway.Routes()
	require.NoError(t, err)
	declared := map[string]bool{}
	for _, rt := range routes {
		declared[rt.RPCName()] = true
		require.Contains(t, entrystore.AllRoles, rt.Role, "%s", rt.RPC)
		require.Equal(t, rt.Mutating(), rt.Idempotency != pb.Idempotency_IDEMPOTENCY_UNSPECIFIED,
			"%s %s: mutating routes, and only they, declare an idempotency", rt.Method, rt.Template)
		require.Equal(t, rt.SecretResponse, rt.RPCName() == "CreateApiKey", "only a new key's answer holds a secret")
	}
	var rpcs []string
	for _, m := range pb.AgentService_ServiceDesc.Methods {
		rpcs = append(rpcs, m.MethodName)
	}
	for _, s := range pb.AgentService_ServiceDesc.Streams {
		rpcs = append(rpcs, s.StreamName)
	}
	for _, name := range rpcs {
		require.True(t, declared[name], "rpc %s has no route with a declaration", name)
	}
	require.Len(t, declared, len(rpcs))

	var roles []string
	for n, name := range pb.Role_name {
		if n != int32(pb.Role_ROLE_UNSPECIFIED) {
			roles = append(roles, strings.ToLower(strings.TrimPrefix(name, "ROLE_")))
		}
	}
	require.ElementsMatch(t, entrystore.AllRoles, roles, "the proto's roles are the store's")
}

// varRE matches a route template's variables.
var varRE = regexp.MustCompile(`\{[^}]+\}`)

// pathOf fills a route's template: the organization, and a fresh UUID for
// every other variable.
func pathOf(rt gateway.Route, org string) string {
	return varRE.ReplaceAllStringFunc(rt.Template, func(v string) string {
		if v == "{org}" {
			return org
		}
		return uuid.NewString()
	})
}

// keyWith mints a key of org A with roles.
func (e *env) keyWith(roles ...string) string {
	e.t.Helper()
	secret, _, err := e.es.MintAPIKey(context.Background(), e.orgA.ID, entrystore.NewAPIKey{Name: strings.Join(roles, "+"), Roles: roles})
	require.NoError(e.t, err)
	return secret
}

// TestRolesAreEnforced: each role against each mutating route, the table
// of both read from the declarations (gateway.Routes): a key without the
// route's role is a 403 naming the role before anything else happens; a
// key with it gets past the check (whatever the fake IDs then answer).
// Over gRPC the same declaration refuses with PERMISSION_DENIED.
func TestRolesAreEnforced(t *testing.T) {
	e := newEnv(t, envOptions{grpc: true})
	routes, err := gateway.Routes()
	require.NoError(t, err)
	keys := map[string]string{}
	for _, role := range entrystore.AllRoles {
		keys[role] = e.keyWith(role)
	}
	checked, mutating := 0, 0
	for _, rt := range routes {
		if !rt.Mutating() {
			continue
		}
		mutating++
		for _, role := range entrystore.AllRoles {
			var body any
			if rt.Method != http.MethodDelete {
				body = "{}"
			}
			path := pathOf(rt, e.orgA.Slug)
			r := e.do(keys[role], rt.Method, path, body)
			if role == rt.Role {
				require.NotEqual(t, http.StatusForbidden, r.Status, "%s %s with %s: %s", rt.Method, rt.Template, role, r.Raw)
				require.NotEqual(t, http.StatusUnauthorized, r.Status, "%s", r.Raw)
				continue
			}
			f := e.fails(keys[role], rt.Method, path, body, http.StatusForbidden, "permission_denied")
			require.Contains(t, f.Body["message"], `"`+rt.Role+`" role`, "%s %s", rt.Method, rt.Template)
			checked++
		}
	}
	require.GreaterOrEqual(t, mutating, 14, "create, signal, cancel, fork, resume, approvals, compact, retention, definitions, keys")
	require.Equal(t, 3*mutating, checked, "every mutating route refuses the three roles it does not declare")

	// Reads need read.
	list := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	e.ok(keys[entrystore.RoleRead], http.MethodGet, list, nil)
	e.fails(keys[entrystore.RoleRun], http.MethodGet, list, nil, http.StatusForbidden, "permission_denied")

	conn, err := grpc.NewClient(e.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	c := pb.NewAgentServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	asReader := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+keys[entrystore.RoleRead])
	_, err = c.CreateAgentExecution(asReader, &pb.CreateAgentExecutionRequest{Org: e.orgA.Slug, UserPrompt: "hi"})
	require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	require.Contains(t, status.Convert(err).Message(), `"run" role`)
	_, err = c.ListAgentExecutions(asReader, &pb.ListAgentExecutionsRequest{Org: e.orgA.Slug})
	require.NoError(t, err)
	asRunner := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+keys[entrystore.RoleRun])
	_, err = c.SetRetentionPolicy(asRunner, &pb.SetRetentionPolicyRequest{Org: e.orgA.Slug, KeepDays: 0})
	require.Equal(t, codes.PermissionDenied, status.Code(err), "a run key cannot wipe the history")

	// The capabilities answer says what the key may do.
	caps := e.ok(keys[entrystore.RoleRead], http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/capabilities", nil)
	require.Equal(t, []any{"read"}, caps["roles"])
}

// keyPath is the REST path of org A's keys.
func (e *env) keyPath(rest string) string { return "/api/orgs/" + e.orgA.Slug + "/api-keys" + rest }

// TestRevokedKeyIsRefused: a key revoked over REST is refused on its next
// request through the gateway that revoked it, though it was cached a
// moment before; one revoked behind the gateway's back (the CLI, another
// gateway) within the key cache's TTL.
func TestRevokedKeyIsRefused(t *testing.T) {
	const ttl = 300 * time.Millisecond
	e := newEnv(t, envOptions{gateway: func(o *gateway.Options) { o.KeyCacheTTL = ttl }})
	created := e.ok(e.keyA, http.MethodPost, e.keyPath(""), map[string]any{"name": "ci", "roles": []string{"read"}})
	secret := created["secret"].(string)
	k := created["key"].(map[string]any)
	require.Equal(t, []any{"read"}, k["roles"])
	list := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	e.ok(secret, http.MethodGet, list, nil)

	revoked := e.ok(e.keyA, http.MethodDelete, e.keyPath("/"+k["id"].(string)), nil)
	require.NotEmpty(t, revoked["revokedAt"])
	e.fails(secret, http.MethodGet, list, nil, http.StatusUnauthorized, "unauthenticated")

	keys := items(t, e.ok(e.keyA, http.MethodGet, e.keyPath(""), nil), "apiKeys")
	i := slices.IndexFunc(keys, func(m map[string]any) bool { return m["id"] == k["id"] })
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, k["prefix"], keys[i]["prefix"])
	require.NotEmpty(t, keys[i]["revokedAt"])
	require.NotEmpty(t, keys[i]["lastUsedAt"])
	require.NotContains(t, keys[i], "secret")

	other := e.keyWith(entrystore.RoleRead)
	e.ok(other, http.MethodGet, list, nil)
	_, ko, err := e.es.AuthenticateAPIKey(context.Background(), other)
	require.NoError(t, err)
	_, err = e.es.RevokeAPIKey(context.Background(), e.orgA.ID, ko.ID)
	require.NoError(t, err)
	revokedAt := time.Now()
	poll(t, 10*time.Second, func() bool { return e.do(other, http.MethodGet, list, nil).Status == http.StatusUnauthorized },
		"a key revoked in the store was never refused")
	require.Less(t, time.Since(revokedAt), ttl+2*time.Second, "refused within the cache's TTL")

	e.fails(e.keyA, http.MethodDelete, e.keyPath("/"+uuid.NewString()), nil, http.StatusNotFound, "not_found")
}

// TestExpiredKeyIsRefused: a key minted with an expiry is refused once it
// passes, though the cache (5 s here) still holds it; one expired over
// REST is refused at once; an expiry in the past or an unknown role is a
// 400.
func TestExpiredKeyIsRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	list := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	at := time.Now().Add(time.Second).UTC()
	created := e.ok(e.keyA, http.MethodPost, e.keyPath(""), map[string]any{"roles": []string{"read"}, "expiresAt": at.Format(time.RFC3339Nano)})
	secret := created["secret"].(string)
	require.NotEmpty(t, created["key"].(map[string]any)["expiresAt"])
	e.ok(secret, http.MethodGet, list, nil)
	poll(t, 10*time.Second, func() bool { return e.do(secret, http.MethodGet, list, nil).Status == http.StatusUnauthorized },
		"an expired key was never refused")
	require.Less(t, time.Until(at), time.Duration(0))
	require.Less(t, time.Since(at), gateway.DefaultKeyCacheTTL, "refused before the cache entry would have run out")

	created = e.ok(e.keyA, http.MethodPost, e.keyPath(""), map[string]any{"roles": []string{"run", "read"}})
	secret = created["secret"].(string)
	e.ok(secret, http.MethodGet, list, nil)
	expired := e.ok(e.keyA, http.MethodPost, e.keyPath("/"+created["key"].(map[string]any)["id"].(string)+"/expire"), map[string]any{})
	require.NotEmpty(t, expired["expiresAt"])
	e.fails(secret, http.MethodGet, list, nil, http.StatusUnauthorized, "unauthenticated")

	e.fails(e.keyA, http.MethodPost, e.keyPath(""), map[string]any{"expiresAt": time.Now().Add(-time.Hour).Format(time.RFC3339)},
		http.StatusBadRequest, "invalid_argument")
	bad := e.fails(e.keyA, http.MethodPost, e.keyPath(""), map[string]any{"roles": []string{"root"}}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, bad.Body["message"], `unknown role "root"`)
}
