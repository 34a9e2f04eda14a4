package entrystore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestFirstPromptIsStoredOnce: once an execution's input entry holds its
// first prompt, the row's input no longer does, and every read of the row
// still gives the prompt; an input entry that says something else leaves
// the row's prompt where it is.
func TestFirstPromptIsStoredOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	prompt := "Summarise this long document: lorem ipsum dolor sit amet"
	message := func(text string) json.RawMessage {
		b, err := json.Marshal(map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": text}}})
		require.NoError(t, err)
		return b
	}
	stored := func(id string) map[string]any {
		var raw []byte
		require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT input::text FROM agent_execution WHERE id = $1`, id).Scan(&raw))
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		return m
	}
	for _, tc := range []struct {
		name, text string
		kept       bool
	}{{"the same prompt", prompt, false}, {"another text", "something else", true}} {
		t.Run(tc.name, func(t *testing.T) {
			input, err := json.Marshal(map[string]any{"userPrompt": prompt, "resumeLeafId": ""})
			require.NoError(t, err)
			ex, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: entrystore.DefaultKind, Input: input})
			require.NoError(t, err)
			require.Equal(t, prompt, stored(ex.ID)["userPrompt"])
			_, _, err = f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: ex.ID, Type: "message", Role: "user",
				Content: message(tc.text), IdempotencyKey: ex.ID + "/input"})
			require.NoError(t, err)
			_, kept := stored(ex.ID)["userPrompt"]
			require.Equal(t, tc.kept, kept)
			got, err := f.store.GetExecution(ctx, f.org.ID, ex.ID)
			require.NoError(t, err)
			var in map[string]any
			require.NoError(t, json.Unmarshal(got.Input, &in))
			require.Equal(t, prompt, in["userPrompt"], "a read puts the prompt back")
			require.Contains(t, in, "resumeLeafId")
		})
	}
}
