package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// executor starts, signals and cancels executions: client.Client, or a
// stand-in where a test needs no Temporal.
type executor interface {
	Start(ctx context.Context, req client.StartRequest) (entrystore.Execution, error)
	SignalOnce(ctx context.Context, id, orgID, executionID, name string, value json.RawMessage) (entrystore.Signal, error)
	Cancel(ctx context.Context, orgID, executionID string) (entrystore.Execution, error)
	Resume(ctx context.Context, req client.ResumeRequest) (entrystore.Execution, error)
	Fork(ctx context.Context, req client.ForkRequest) (entrystore.Execution, error)
	Explain(ctx context.Context, in client.ExplainInput) error
	SummariseBranch(ctx context.Context, ex entrystore.Execution, in client.BranchSummaryInput) (string, error)
	ScheduleFollowUp(ctx context.Context, id, orgID, executionID, text string, at time.Time) (entrystore.FollowUp, error)
	CancelFollowUp(ctx context.Context, orgID, executionID, id string) (entrystore.FollowUp, error)
}

// service implements AgentService. Every method authorizes first, so an
// unauthenticated caller learns nothing about the request's validity.
type service struct {
	pb.UnimplementedAgentServiceServer
	es      *entrystore.Store
	ex      executor
	v       *validator
	log     *slog.Logger
	streams *streamer
	// keys caches and rate-limits API key lookups (keyguard.go); nil:
	// every request asks the store.
	keys *keyGuard
	// tarpit holds refusals of addresses past their bucket (tarpit.go);
	// nil: none.
	tarpit *tarpit
	// slots caps the streams open per key and per organization
	// (ssecap.go); nil: no cap.
	slots *streamSlots
	// pageBytes is the byte budget of a page of conversation data
	// (Options.PageBytes); 0: none.
	pageBytes int
	// ready caches /readyz's database check (http.go).
	ready readiness
	// idempotency configures Idempotency-Key handling (idempotency.go).
	idempotency idempotencyConfig
	// keyEnds retries the key writes the store refused for a while
	// (idempotency_end.go); nil: none are retried.
	keyEnds *keyEnds
	// mcpCallTimeout bounds an MCP tool call's wait (mcpserve_call.go).
	mcpCallTimeout time.Duration
	// maxTotalSteps bounds a run's steps across resumes.
	maxTotalSteps int
	// maxBestOf is the most branches one best-of runs (Options.MaxBestOf).
	maxBestOf int
	// windows extends the table of models' context windows.
	windows agentsdk.ContextWindows
	// explainModel is Options.ExplainModel; zero: no explanations.
	explainModel agentsdk.ModelRef
	// held reads a worker-held execution's conversation from its worker
	// (conversation.go); nil: such reads are unavailable.
	held func(entrystore.Execution) conversationStore
}

// commitTimeout bounds a start, signal or cancel once it has begun.
const commitTimeout = 30 * time.Second

// committed is the context of a start, signal or cancel: a client that
// hangs up halfway must not leave an execution row without its workflow or
// an inbox signal without its Temporal signal.
func committed(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
}

// paged authorizes a list request and checks its paging.
func (s *service) paged(ctx context.Context, org string, size int32, cursor string) (string, entrystore.Page, error) {
	o, err := s.authorize(ctx, org)
	if err != nil {
		return "", entrystore.Page{}, err
	}
	p, err := s.page(size, cursor)
	return o.ID, p, err
}

// page converts a list request's paging fields, with the gateway's byte
// budget: a page ends early, with a nextCursor, rather than pass it.
func (s *service) page(size int32, cursor string) (entrystore.Page, error) {
	if size < 0 {
		return entrystore.Page{}, invalid("pageSize must not be negative")
	}
	return entrystore.Page{Limit: int(size), Cursor: cursor, Bytes: s.pageBytes}, nil
}

// execution authorizes a request about one execution and loads it;
// another organization's is a 404 like a missing one.
func (s *service) execution(ctx context.Context, org, id string) (entrystore.Execution, error) {
	o, err := s.authorize(ctx, org)
	if err != nil {
		return entrystore.Execution{}, err
	}
	ex, err := s.es.GetExecution(ctx, o.ID, id)
	if err != nil {
		return ex, s.notFound(err, "agent execution", id)
	}
	return ex, nil
}

// notFound names what was not found; other errors map as usual.
func (s *service) notFound(err error, what, id string) error {
	if st := toStatus(s.log, "get "+what, err); status.Code(st) != codes.NotFound {
		return st
	}
	return status.Errorf(codes.NotFound, "%s %q not found", what, id)
}
