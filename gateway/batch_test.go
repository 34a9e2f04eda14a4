package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// A worker writes a model's tokens in batches, each announced by one
// notification naming the batch's first ID. A live stream, following
// through the hub from its very first notification, gets every event of
// a batch larger than one table read, once and in order, then later
// batches.
func TestStreamDeliversWholeBatches(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	id := e.newRow()
	// The response's headers arrive after the replay: from here on, the
	// hub delivers.
	s := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream/consolidated", "")

	var want []entrystore.StreamEvent
	for _, n := range []int{700, 3, 1} {
		batch := make([]entrystore.NewStreamEvent, n)
		for i := range batch {
			batch[i] = entrystore.NewStreamEvent{Event: "token", Data: json.RawMessage(fmt.Sprintf(`{"agentExecutionId":%q,"data":"%d-%d "}`, id, len(want), i))}
		}
		evs, err := e.es.AppendStreamEvents(context.Background(), e.orgA.ID, id, batch)
		require.NoError(t, err)
		want = append(want, evs...)
	}
	for i, w := range want {
		got, ok := s.next(t, 30*time.Second)
		require.True(t, ok, "the stream ended after %d of %d events", i, len(want))
		require.Equal(t, w.ID, got.ID, "event %d", i)
		require.JSONEq(t, string(w.Data), got.Data, "event %d", i)
	}
}
