package gateway_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRetentionOverREST: an organization reads its retention (the defaults
// until it sets one), sets it, and bad values are clear 400s.
func TestRetentionOverREST(t *testing.T) {
	e := newEnv(t, envOptions{})
	path := "/api/orgs/" + e.orgA.Slug + "/retention"
	got := e.ok(e.keyA, http.MethodGet, path, nil)
	require.Equal(t, true, got["isDefault"])
	require.EqualValues(t, 30, got["keepDays"])
	require.EqualValues(t, 90, got["keepFailedDays"])

	set := e.ok(e.keyA, http.MethodPut, path, map[string]any{"keepDays": 7, "keepFailedDays": 14})
	require.EqualValues(t, 7, set["keepDays"])
	require.NotEmpty(t, set["updatedAt"])
	got = e.ok(e.keyA, http.MethodGet, path, nil)
	require.Equal(t, false, got["isDefault"])
	require.EqualValues(t, 14, got["keepFailedDays"])
	other := e.ok(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/retention", nil)
	require.Equal(t, true, other["isDefault"], "one organization's policy is its own")

	e.fails(e.keyA, http.MethodPut, path, map[string]any{"keepDays": -1, "keepFailedDays": 1}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPut, path, map[string]any{"keepDays": 1, "keepFailedDays": 40000}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPut, path, map[string]any{"keepDays": "week"}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPut, path, map[string]any{"keepDayz": 3}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyB, http.MethodPut, path, map[string]any{"keepDays": 1}, http.StatusNotFound, "not_found")
	e.fails("", http.MethodGet, path, nil, http.StatusUnauthorized, "unauthenticated")
}
