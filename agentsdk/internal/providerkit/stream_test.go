package providerkit_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// fakeStream is an SDK stream over a fixed list of events.
type fakeStream struct {
	events []string
	at     int
	err    error
	closed bool
}

func (s *fakeStream) Next() bool {
	if s.at >= len(s.events) {
		return false
	}
	s.at++
	return true
}
func (s *fakeStream) Current() string { return s.events[s.at-1] }
func (s *fakeStream) Err() error      { return s.err }
func (s *fakeStream) Close() error    { s.closed = true; return nil }

func TestDrainPassesEveryEventThenCloses(t *testing.T) {
	s := &fakeStream{events: []string{"a", "b", "c"}}
	var got []string
	require.NoError(t, providerkit.Drain(context.Background(), s, func(e string) { got = append(got, e) }))
	require.Equal(t, []string{"a", "b", "c"}, got)
	require.True(t, s.closed)
}

func TestDrainReturnsTheStreamsError(t *testing.T) {
	boom := errors.New("connection reset")
	s := &fakeStream{events: []string{"a"}, err: boom}
	require.ErrorIs(t, providerkit.Drain(context.Background(), s, func(string) {}), boom)
	require.True(t, s.closed)
}

func TestDrainReturnsCancellationOfAQuietStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &fakeStream{events: []string{"a", "b"}}
	err := providerkit.Drain(ctx, s, func(string) { cancel() })
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, s.closed)
}

func TestAnswerStampsAndPrices(t *testing.T) {
	prices, err := providerkit.NewPrices(map[string]agentsdk.Price{"m": {Input: 2, Output: 10}}, nil, eightDigits)
	require.NoError(t, err)
	msg := agentsdk.Message{Role: agentsdk.RoleAssistant, Provider: "sdk", Model: "sdk-model",
		Usage: &agentsdk.Usage{Input: 1_000_000, Output: 500_000}}

	resp := providerkit.Answer("mine", agentsdk.ModelRef{Provider: "mine", ModelID: "m-20250101"}, prices, msg)
	require.Equal(t, "mine", resp.Message.Provider)
	require.Equal(t, "m-20250101", resp.Message.Model)
	require.InDelta(t, 7.0, resp.Message.Usage.Cost, 1e-9)

	unpriced := agentsdk.Message{Role: agentsdk.RoleAssistant, Usage: &agentsdk.Usage{Input: 10}}
	resp = providerkit.Answer("mine", agentsdk.ModelRef{ModelID: "unknown"}, prices, unpriced)
	require.Zero(t, resp.Message.Usage.Cost)
	require.NotPanics(t, func() { providerkit.Answer("mine", agentsdk.ModelRef{ModelID: "m"}, prices, agentsdk.Message{}) })
}

func TestInlineImage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n rest of the picture")
	mt, data := providerkit.InlineImage(&agentsdk.Image{Data: png})
	require.Equal(t, "image/png", mt, "sniffed when the block names none")
	require.Equal(t, base64.StdEncoding.EncodeToString(png), data)

	mt, data = providerkit.InlineImage(&agentsdk.Image{MediaType: "image/webp", Data: []byte("png!")})
	require.Equal(t, "image/webp", mt)
	require.Equal(t, "cG5nIQ==", data)
}
