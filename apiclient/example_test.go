package apiclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// fakeGateway answers as the gateway does: API messages in protojson,
// errors as {"code", "message"} with their HTTP status (503 with
// Retry-After), and a stream as Server-Sent Events with "id:" lines.
func fakeGateway() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/orgs/acme/agent-executions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer key-1" || len(body) == 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"ex-1","kind":"react-agent","status":"PENDING","someFieldOfANewerGateway":1}`)
	})
	mux.HandleFunc("GET /api/orgs/acme/agent-executions/nope", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"not_found","message":"execution nope not found"}`+"\n")
	})
	mux.HandleFunc("GET /api/orgs/acme/agent-executions/busy", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"code":"unavailable","message":"the store is unreachable; retry shortly"}`+"\n")
	})
	// Follow asks whether an execution whose stream closed early has ended.
	mux.HandleFunc("GET /api/orgs/acme/agent-executions/ex-1", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"ex-1","status":"RUNNING"}`)
	})
	// The first connection is cut after two events; a reconnection
	// resumes after the Last-Event-ID it sends (an event sent again is
	// dropped by Follow).
	mux.HandleFunc("GET /api/orgs/acme/agent-executions/ex-1/stream/consolidated", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.Header.Get("Last-Event-ID") {
		case "":
			_, _ = io.WriteString(w, "id: 1\nevent: agent.started\ndata: {}\n\n: ping\n\nid: 2\nevent: token\ndata: {\"data\":\"Hel\"}\n\n")
		case "2":
			_, _ = io.WriteString(w, "id: 2\nevent: token\ndata: {\"data\":\"Hel\"}\n\nid: 3\nevent: token\ndata: {\"data\":\"lo\"}\n\nid: 4\nevent: agent.completed\ndata: {}\n\n")
		}
	})
	return httptest.NewServer(mux)
}

// ExampleClient_Do sends typed API messages and reads the gateway's
// errors as *apiclient.Error values with the API's code.
func ExampleClient_Do() {
	srv := fakeGateway()
	defer srv.Close()
	c, err := apiclient.New(srv.URL, "acme", "key-1")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	ex := &agentreev1.AgentExecution{}
	err = c.Do(ctx, http.MethodPost, "/agent-executions", &agentreev1.CreateAgentExecutionRequest{Kind: "react-agent", UserPrompt: "Hello"}, ex,
		apiclient.IdempotencyKey("create-hello-1"))
	fmt.Println(ex.GetId(), ex.GetStatus(), err)

	err = c.Do(ctx, http.MethodGet, "/agent-executions/nope", nil, ex)
	fmt.Println(apiclient.StatusOf(err), apiclient.CodeOf(err))
	fmt.Println(err)

	err = c.Do(ctx, http.MethodGet, "/agent-executions/busy", nil, ex)
	var e *apiclient.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, "retry after", e.RetryAfter)
	}
	// Output:
	// ex-1 PENDING <nil>
	// 404 not_found
	// execution nope not found (404 not_found)
	// 503 unavailable retry after 5s
}

// ExampleClient_Follow follows an execution's stream to its end: a cut
// connection is resumed with Last-Event-ID, and each event is yielded
// once, in order.
func ExampleClient_Follow() {
	srv := fakeGateway()
	defer srv.Close()
	c, err := apiclient.New(srv.URL, "acme", "key-1")
	if err != nil {
		panic(err)
	}
	opts := apiclient.FollowOptions{OnReconnect: func(last string, _ error) { fmt.Println("resumed after", last) }}
	for ev, err := range c.Follow(context.Background(), "ex-1", opts) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(ev.ID, ev.Name, string(ev.Data))
	}
	// Output:
	// 1 agent.started {}
	// 2 token {"data":"Hel"}
	// resumed after 2
	// 3 token {"data":"lo"}
	// 4 agent.completed {}
}
