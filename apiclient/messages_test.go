package apiclient_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/apiclient"
)

// TestMessagesFollowsCursors: Messages reads every page, passing each
// page's cursor to the next request, and returns the messages in order.
func TestMessagesFollowsCursors(t *testing.T) {
	var cursors []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/orgs/acme/agent-executions/ex%2F1/messages", r.URL.EscapedPath())
		require.Equal(t, "500", r.URL.Query().Get("pageSize"))
		cursors = append(cursors, r.URL.Query().Get("cursor"))
		switch r.URL.Query().Get("cursor") {
		case "":
			_, _ = io.WriteString(w, `{"messages":[{"entryId":"a","role":"user"},{"entryId":"b","role":"assistant"}],"nextCursor":"c2"}`)
		case "c2":
			_, _ = io.WriteString(w, `{"messages":[{"entryId":"c","role":"user"}],"leafEntryId":"c"}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"code":"invalid_argument","message":"bad cursor"}`)
		}
	}))
	defer srv.Close()
	c, err := apiclient.New(srv.URL, "acme", "k")
	require.NoError(t, err)

	msgs, err := c.Messages(context.Background(), "ex/1")
	require.NoError(t, err)
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.GetEntryId())
	}
	require.Equal(t, []string{"a", "b", "c"}, ids)
	require.Equal(t, []string{"", "c2"}, cursors)
}

// TestMessagesReportsTheAPIError: a refused page is the API's error, with
// its code.
func TestMessagesReportsTheAPIError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"not_found","message":"execution x not found"}`)
	}))
	defer srv.Close()
	c, err := apiclient.New(srv.URL, "acme", "k")
	require.NoError(t, err)
	_, err = c.Messages(context.Background(), "x")
	require.Equal(t, "not_found", apiclient.CodeOf(err))
}
