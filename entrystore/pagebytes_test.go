package entrystore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestListPagesStopAtTheirByteBudget: a list page with Page.Bytes ends
// before the row that would take its rows past the budget, with a cursor
// that goes on from there, every row once; a row larger than the whole
// budget comes alone; Bytes 0 is no budget.
func TestListPagesStopAtTheirByteBudget(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	asst := f.append(t, "", "assistant")
	pad := strings.Repeat("x", 10<<10)
	var want []string
	for i := range 12 {
		out := pad
		if i == 5 {
			out = strings.Repeat("y", 100<<10)
		}
		in, err := json.Marshal(map[string]string{"q": fmt.Sprint(i)})
		require.NoError(t, err)
		outJSON, err := json.Marshal(out)
		require.NoError(t, err)
		tc, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID, MessageID: asst.ID,
			ToolCallID: fmt.Sprintf("call_%d", i), ToolName: "search", Input: in, StepNumber: i,
			Status: entrystore.ToolCallCompleted, Output: outJSON})
		require.NoError(t, err)
		want = append(want, tc.ID)
	}

	const budget = 32 << 10
	var got []string
	pages := 1
	for cursor := ""; ; pages++ {
		calls, next, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{},
			entrystore.Page{Limit: entrystore.MaxPageLimit, Cursor: cursor, Bytes: budget})
		require.NoError(t, err)
		require.NotEmpty(t, calls, "every page moves on")
		size := 0
		for _, c := range calls {
			got = append(got, c.ID)
			size += len(c.Output)
			if c.StepNumber == 5 {
				require.Len(t, calls, 1, "the row over the budget comes alone")
			}
		}
		if len(calls) > 1 {
			require.LessOrEqual(t, size, budget)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	require.Equal(t, want, got)
	require.GreaterOrEqual(t, pages, 5, "the budget, not the limit, ended the pages")

	all, next, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{}, entrystore.Page{Limit: entrystore.MaxPageLimit})
	require.NoError(t, err)
	require.Len(t, all, 12, "no budget: the row limit alone")
	require.Empty(t, next)
}
