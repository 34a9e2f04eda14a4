package gateway_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
// the event stream as a server stream.
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
}
