package gateway_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// TestOpenAPIIsVersion3 fetches /openapi.json from a running gateway: it
// parses and validates as OpenAPI 3 and documents the REST routes; the
// Swagger 2.0 original stays at /swagger.json.
func TestOpenAPIIsVersion3(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	get := func(path string) []byte {
		resp, err := http.Get(e.base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return raw
	}
	doc, err := openapi3.NewLoader().LoadFromData(get("/openapi.json"))
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	require.Regexp(t, `^3\.`, doc.OpenAPI)
	for path, methods := range map[string][]string{
		"/api/orgs/{org}/agent-executions":                                 {"GET", "POST"},
		"/api/orgs/{org}/agent-executions/{id}":                            {"GET", "DELETE"},
		"/api/orgs/{org}/agent-executions/{id}/signal":                     {"POST"},
		"/api/orgs/{org}/agent-definitions":                                {"GET", "POST"},
		"/api/orgs/{org}/agent-definitions/{id}":                           {"GET", "PUT", "DELETE"},
		"/api/orgs/{org}/agent-executions/{executionId}/messages":          {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/checkpoints":       {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/tool-calls":        {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/stream":            {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/entries/{entryId}": {"GET"},
	} {
		item := doc.Paths.Find(path)
		require.NotNil(t, item, "%s is documented", path)
		for _, m := range methods {
			require.NotNil(t, item.GetOperation(m), "%s %s is documented", m, path)
		}
	}
	create := doc.Paths.Find("/api/orgs/{org}/agent-executions").Post
	require.NotNil(t, create.RequestBody, "the create body is an OpenAPI 3 requestBody")
	require.NotNil(t, create.RequestBody.Value.Content.Get("application/json"))

	require.Contains(t, string(get("/swagger.json")), `"swagger": "2.0"`)
}
