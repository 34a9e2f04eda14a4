package gateway_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// TestGRPC: the same service over gRPC, authenticated by metadata, with
// the event stream as a server stream and quota refusals as
// RESOURCE_EXHAUSTED with their details.
func TestGRPC(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "over gRPC"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, grpc: true})
	conn, err := grpc.NewClient(e.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	c := pb.NewAgentServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_, err = c.GetAgentExecution(ctx, &pb.GetAgentExecutionRequest{Org: e.orgA.Slug, Id: "x"})
	require.Equal(t, codes.Unauthenticated, status.Code(err))
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+e.keyA)
	ex, err := c.CreateAgentExecution(authed, &pb.CreateAgentExecutionRequest{
		Org: e.orgA.Slug, UserPrompt: "hi", Models: []*pb.ModelRef{{Provider: scripted.Name, ModelId: "m"}},
	})
	require.NoError(t, err)
	_, err = c.CreateAgentExecution(authed, &pb.CreateAgentExecutionRequest{Org: e.orgA.Slug, UserPrompt: " "})
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	asB := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+e.keyB)
	_, err = c.GetAgentExecution(asB, &pb.GetAgentExecutionRequest{Org: e.orgB.Slug, Id: ex.GetId()})
	require.Equal(t, codes.NotFound, status.Code(err))

	stream, err := c.StreamAgentExecution(authed, &pb.StreamAgentExecutionRequest{Org: e.orgA.Slug, ExecutionId: ex.GetId(), Consolidated: true})
	require.NoError(t, err)
	var events []string
	var last int64
	var text, started string
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Greater(t, ev.GetId(), last)
		last = ev.GetId()
		events = append(events, ev.GetEvent())
		require.NotNil(t, ev.GetPayload(), "%s has its typed payload", ev.GetEvent())
		text += ev.GetToken().GetData()
		if s := ev.GetAgentStarted(); s != nil {
			started = s.GetAgentExecutionId()
		}
	}
	require.Equal(t, "over gRPC", text)
	require.Equal(t, ex.GetId(), started)

	require.Equal(t, "agent.started", events[0])
	require.Contains(t, events, "token")
	require.Equal(t, "agent.completed", events[len(events)-1])

	// A spent quota is RESOURCE_EXHAUSTED with the standard details: which
	// quota (QuotaFailure) and how long until it resets (RetryInfo).
	q, err := c.SetOrgQuota(authed, &pb.SetOrgQuotaRequest{Org: e.orgA.Slug, TokensPerDay: 10})
	require.NoError(t, err)
	require.EqualValues(t, 10, q.GetTokensPerDay())
	_, err = e.es.Pool().Exec(ctx, `INSERT INTO org_usage_day (org_id, day, tokens) VALUES ($1, $2::date, 10)
		ON CONFLICT (org_id, day) DO UPDATE SET tokens = 10`, e.orgA.ID, time.Now().UTC().Format(time.DateOnly))
	require.NoError(t, err)
	_, err = c.CreateAgentExecution(authed, &pb.CreateAgentExecutionRequest{
		Org: e.orgA.Slug, UserPrompt: "hi", Models: []*pb.ModelRef{{Provider: scripted.Name, ModelId: "m"}},
	})
	st := status.Convert(err)
	require.Equal(t, codes.ResourceExhausted, st.Code(), "%v", err)
	var quota *errdetails.QuotaFailure
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.QuotaFailure:
			quota = d
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	require.NotNil(t, quota)
	require.Equal(t, "tokensPerDay", quota.GetViolations()[0].GetDescription())
	require.NotNil(t, retry)
	require.Positive(t, retry.GetRetryDelay().AsDuration())
}
