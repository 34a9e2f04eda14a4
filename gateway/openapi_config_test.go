package gateway_test

import (
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestOpenAPIDocumentsExecutionConfig: the served /openapi.json documents
// the execution configuration as a typed schema — every key agentsdk.Config
// decodes, with agentsdk's ranges and choices — which create, fork,
// definitions and the execution itself reference; and a key it does not
// have is still a 400 that names it.
func TestOpenAPIDocumentsExecutionConfig(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	resp, err := http.Get(e.base + "/openapi.json")
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	require.NoError(t, err)

	cfg := doc.Components.Schemas["v1ExecutionConfig"]
	require.NotNil(t, cfg, "ExecutionConfig is a schema")
	props := cfg.Value.Properties
	typ := reflect.TypeFor[agentsdk.Config]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		require.Contains(t, props, name, "agentsdk.Config's %s is documented", name)
		require.NotEmpty(t, props[name].Value.Description, "%s has a description", name)
	}
	for _, b := range agentsdk.ConfigBounds {
		p := props[b.Field].Value
		require.True(t, p.Type.Is("integer"), "%s is an integer", b.Field)
		require.NotNil(t, p.Min, "%s has a minimum", b.Field)
		require.NotNil(t, p.Max, "%s has a maximum", b.Field)
		require.Equal(t, float64(b.Min), *p.Min, "%s minimum", b.Field)
		require.Equal(t, float64(b.Max), *p.Max, "%s maximum", b.Field)
	}
	require.Equal(t, agentsdk.MaxTemperature, *props["temperature"].Value.Max)
	require.ElementsMatch(t, []any{"one-shot", "multi-turn"}, props["mode"].Value.Enum)
	require.ElementsMatch(t, []any{"remote", "local"}, props["persistenceMode"].Value.Enum)
	require.ElementsMatch(t, []any{"auto", "ask", "forbid"}, props["toolPolicy"].Value.AdditionalProperties.Schema.Value.Enum)
	require.Contains(t, props["compaction"].Value.Properties, "keepRecent", "compaction is typed too")

	for _, schema := range []string{"v1AgentExecution", "v1AgentDefinition", "AgentServiceCreateAgentExecutionBody", "AgentServiceCreateAgentDefinitionBody", "AgentServiceForkAgentExecutionBody"} {
		s := doc.Components.Schemas[schema]
		require.NotNil(t, s, "schema %s", schema)
		require.Equal(t, "#/components/schemas/v1ExecutionConfig", s.Value.Properties["config"].Ref, "%s.config is an ExecutionConfig", schema)
	}

	r := e.fails(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", `{"userPrompt":"hi","config":{"maxTurnz":3}}`, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], `unknown field "config.maxTurnz"`)
	r = e.fails(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", `{"userPrompt":"hi","config":{"maxParallelTools":65}}`, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "config.maxParallelTools must be a whole number from 0 to 64")
}
