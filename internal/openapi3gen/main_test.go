package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckedInDocumentIsCurrent: the OpenAPI 3 document the gateway
// serves is the conversion of the checked-in Swagger document, so a proto
// change without `make generate` fails here rather than in a client.
func TestCheckedInDocumentIsCurrent(t *testing.T) {
	swagger, err := os.ReadFile("../../proto/agentree/v1/agentree.swagger.json")
	require.NoError(t, err)
	want, err := render(swagger)
	require.NoError(t, err)
	got, err := os.ReadFile("../../proto/agentree/v1/agentree.openapi.json")
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "proto/agentree/v1/agentree.openapi.json is not the conversion of agentree.swagger.json: run make generate")
}
