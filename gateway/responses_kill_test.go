package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
)

// stallingAnthropic is a fake Anthropic server whose first call streams
// first and then hangs until its client goes away (the worker killed
// mid-answer); every later call streams the whole of rest.
type stallingAnthropic struct {
	first, rest string
	stalled     chan struct{}

	mu    sync.Mutex
	calls int
}

func (s *stallingAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if n > 1 {
		_, _ = io.WriteString(w, s.rest)
		return
	}
	_, _ = io.WriteString(w, s.first)
	http.NewResponseController(w).Flush()
	close(s.stalled)
	<-r.Context().Done()
}

func (s *stallingAnthropic) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// newKillEnv is a gateway whose one worker is a process of its own,
// answered by a stallingAnthropic whose first call streams "Survives "
// and hangs, every later one "Survives the kill."; kill, once that first
// call has stalled, SIGKILLs the process (which cannot finish or clean
// up) and starts the worker that takes over.
func newKillEnv(t *testing.T) (*env, *stallingAnthropic, func()) {
	t.Helper()
	fake := &stallingAnthropic{
		first:   providertest.NewAnthropicStream(responsesModel, providertest.AnthropicUsage{Input: 50}).Text("Survives ").String(),
		rest:    providertest.NewAnthropicStream(responsesModel, providertest.AnthropicUsage{Input: 50}).Text("Survives ", "the kill.").End("end_turn", 6),
		stalled: make(chan struct{}),
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e := newEnv(t, envOptions{})
	victim := execSelf(t, envWorkerProcess+"=1", envWorkerDB+"="+e.dbURL, envWorkerQueue+"="+e.queue,
		envWorkerAnthropic+"="+srv.URL, "TEMPORAL_ADDRESS="+temporaltest.Address(t))
	poll(t, time.Minute, func() bool { return len(e.capabilities().Workers) == 1 }, "the worker process never recorded its capabilities")
	return e, fake, func() {
		<-fake.stalled
		require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
		_, _ = victim.Process.Wait()
		p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "test-key"})
		require.NoError(t, err)
		e.startWorker(e.queue, envOptions{providers: []agentsdk.Provider{p}})
	}
}

// TestResponseSurvivesWorkerKill streams a response through the official
// SDK while the worker process answering it is SIGKILLed mid-answer: a
// worker started afterwards takes the turn over, the stream goes on, and
// the client gets the whole answer once — its deltas, one
// output_text.done and one response.completed — as the one assistant
// entry the tree keeps: the retried call streams again from its start,
// and the gateway sends only what the client has not had.
func TestResponseSurvivesWorkerKill(t *testing.T) {
	const whole = "Survives the kill."
	e, fake, kill := newKillEnv(t)

	oa := e.openAIClient(e.keyA)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stream := oa.Responses.NewStreaming(ctx, ask("Will you survive?", ""))
	var (
		before, after strings.Builder
		killed        bool
		done          []string
		completed     []responses.Response
	)
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			if killed {
				after.WriteString(ev.Delta)
				continue
			}
			before.WriteString(ev.Delta)
			// The first attempt's tokens reached the client: kill its
			// worker, which cannot finish or clean up, and start another.
			kill()
			killed = true
		case "response.output_text.done":
			done = append(done, ev.Text)
		case "response.completed":
			completed = append(completed, ev.Response)
		}
	}
	require.NoError(t, stream.Err())
	require.True(t, killed, "no token arrived before the kill")
	require.Equal(t, "Survives ", before.String())
	require.Equal(t, "the kill.", after.String(), "the retried call's deltas, without what the client had")
	require.Equal(t, whole, before.String()+after.String(), "the deltas hold the answer once")
	require.Equal(t, []string{whole}, done, "the answer is delivered whole, once")
	require.Len(t, completed, 1)
	final := completed[0]
	require.Equal(t, responses.ResponseStatusCompleted, final.Status)
	require.Equal(t, whole, final.OutputText())
	requireUsage(t, &final, 50, 6)
	require.Equal(t, 2, fake.callCount(), "the cut call was made again, once")

	got, err := oa.Responses.Get(ctx, final.ID, responses.ResponseGetParams{})
	require.NoError(t, err)
	require.Equal(t, whole, got.OutputText())

	// The tree kept one answer.
	exID := executionOfResponse(t, e, final.ID)
	entries, _, err := e.es.ListEntries(ctx, e.orgA.ID, exID, entrystore.Page{Limit: 100})
	require.NoError(t, err)
	var answers int
	for _, en := range entries {
		if en.Type == string(agentsdk.EntryMessage) && en.Role == string(agentsdk.RoleAssistant) {
			answers++
		}
	}
	require.Equal(t, 1, answers)
}

// executionOfResponse finds the execution a response belongs to: the
// organization's only one in these tests.
func executionOfResponse(t *testing.T, e *env, _ string) string {
	t.Helper()
	es, _, err := e.es.ListExecutions(context.Background(), e.orgA.ID, entrystore.ExecutionFilter{}, entrystore.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, es, 1)
	return es[0].ID
}
