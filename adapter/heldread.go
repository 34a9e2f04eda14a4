package adapter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/adapter/workerstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// heldReader is the workflow of client.HeldReaderWorkflow: it answers
// client.HeldReadQuery from this worker's store and otherwise
// waits forever, so its history stays the few events of its start. The
// query handler reads the store, which a workflow may not do: a query
// changes nothing and adds no event, so nothing replays its reads, and
// the store it reads is the one the execution's own runs write on this
// worker — the answer is the conversation as stored now.
func (o *Options) heldReader(ctx workflow.Context) error {
	err := workflow.SetQueryHandler(ctx, client.HeldReadQuery, func(in client.HeldReadInput) (client.HeldReadOutput, error) {
		qctx, cancel := context.WithTimeout(context.Background(), storeWriteTimeout)
		defer cancel()
		return o.readHeld(qctx, in)
	})
	if err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

// readHeld answers one read. What is not there, or a malformed cursor,
// is said in the answer (the client maps it to the store's errors); an
// error is a store that failed.
func (o *Options) readHeld(ctx context.Context, in client.HeldReadInput) (client.HeldReadOutput, error) {
	var out client.HeldReadOutput
	f := o.WorkerStore
	if f == nil {
		return out, fmt.Errorf("adapter: worker %q has no worker store", o.WorkerName)
	}
	n := min(max(in.Limit, 0), entrystore.MaxPageLimit)
	if n == 0 {
		n = entrystore.DefaultPageLimit
	}
	var err error
	switch in.Op {
	case client.ReadEntries:
		var after int64
		if after, err = intCursor(in.Cursor); err != nil {
			return client.HeldReadOutput{Invalid: err.Error()}, nil
		}
		var es []workerstore.Stored
		var more bool
		es, more, err = f.Entries(ctx, in.OrgID, in.ExecutionID, after, n)
		out.Entries = storeEntries(in.OrgID, es)
		if more {
			out.Next = strconv.FormatInt(es[len(es)-1].Seq, 10)
		}
	case client.ReadEntry:
		// Any entry of the organization, as the Postgres store's
		// GetEntry: the gateway checks whose it is.
		var e workerstore.Stored
		if e, err = f.Entry(ctx, in.OrgID, in.ID); err == nil {
			out.Entries = storeEntries(in.OrgID, []workerstore.Stored{e})
		}
	case client.ReadPath:
		var es []workerstore.Stored
		es, err = f.StoredPath(ctx, in.OrgID, in.ID)
		out.Entries = storeEntries(in.OrgID, es)
	case client.ReadPathPage:
		var es []workerstore.Stored
		es, out.More, err = f.PathPage(ctx, in.OrgID, in.ExecutionID, in.ID, in.AfterDepth, n, in.EntryType)
		out.Entries = storeEntries(in.OrgID, es)
	case client.ReadLeaf:
		out.Leaf, err = f.Leaf(ctx, in.ExecutionID)
	case client.ReadCheckpoints:
		after := int64(-1)
		if in.Cursor != "" {
			if after, err = intCursor(in.Cursor); err != nil {
				return client.HeldReadOutput{Invalid: err.Error()}, nil
			}
		}
		var cs []entrystore.Checkpoint
		var more bool
		cs, more, err = f.Checkpoints(ctx, in.ExecutionID, int(after), n)
		for _, c := range cs {
			out.Checkpoints = append(out.Checkpoints, storeCheckpoint(c))
		}
		if more {
			out.Next = strconv.Itoa(cs[len(cs)-1].Sequence)
		}
	case client.ReadCheckpoint, client.ReadLatestCheckpoint:
		var c entrystore.Checkpoint
		if in.Op == client.ReadCheckpoint {
			c, err = f.GetCheckpoint(ctx, in.OrgID, in.ExecutionID, in.Sequence)
		} else {
			c, err = f.LatestCheckpoint(ctx, in.ExecutionID)
		}
		if err == nil {
			c.ExecutionID = in.ExecutionID
			out.Checkpoints = []entrystore.Checkpoint{storeCheckpoint(c)}
		}
	case client.ReadToolCalls:
		var cur *workerstore.CallCursor
		if in.Cursor != "" {
			cur = &workerstore.CallCursor{}
			if json.Unmarshal([]byte(in.Cursor), cur) != nil {
				return client.HeldReadOutput{Invalid: fmt.Sprintf("cursor %q is not a nextCursor of this list", in.Cursor)}, nil
			}
		}
		var cs []workerstore.StoredCall
		var more bool
		cs, more, err = f.ToolCalls(ctx, in.ExecutionID, in.ToolName, in.Status, cur, n)
		out.ToolCalls = storeToolCalls(in.OrgID, cs)
		if more {
			last := cs[len(cs)-1]
			b, _ := json.Marshal(workerstore.CallCursor{Step: last.StepNumber, Seq: last.Seq}) // plain fields cannot fail
			out.Next = string(b)
		}
	case client.ReadLatestToolCall:
		var c workerstore.StoredCall
		if c, err = f.LatestToolCall(ctx, in.ExecutionID, in.ID); err == nil {
			out.ToolCalls = storeToolCalls(in.OrgID, []workerstore.StoredCall{c})
		}
	case client.ReadToolCall:
		// By the record's ID, which is derived (storeToolCalls): look
		// among the execution's calls.
		var cs []workerstore.StoredCall
		cur := (*workerstore.CallCursor)(nil)
		for err == nil {
			var more bool
			cs, more, err = f.ToolCalls(ctx, in.ExecutionID, "", "", cur, entrystore.MaxPageLimit)
			for _, c := range storeToolCalls(in.OrgID, cs) {
				if c.ID == in.ID {
					out.ToolCalls = []entrystore.ToolCall{c}
					return out, nil
				}
			}
			if !more {
				err = agentsdk.ErrNotFound
				break
			}
			cur = &workerstore.CallCursor{Step: cs[len(cs)-1].StepNumber, Seq: cs[len(cs)-1].Seq}
		}
	case client.ReadContent:
		out.Content, err = f.Content(ctx, in.OrgID, in.ID)
		out.MediaType = "text/plain"
	case client.ReadUsage:
		var es []workerstore.Stored
		if es, err = f.ModelCallEntries(ctx, in.ExecutionID); err == nil {
			out.Usage = usageByModel(es)
		}
	default:
		return client.HeldReadOutput{Invalid: fmt.Sprintf("unknown read %q", in.Op)}, nil
	}
	if errors.Is(err, agentsdk.ErrNotFound) {
		return client.HeldReadOutput{NotFound: err.Error()}, nil
	}
	return out, err
}

// intCursor reads a cursor the held reads issue: a number.
func intCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("cursor %q is not a nextCursor of this list", s)
	}
	return n, nil
}

func storeEntries(orgID string, es []workerstore.Stored) []entrystore.Entry {
	out := make([]entrystore.Entry, len(es))
	for i, e := range es {
		out[i] = entrystore.Entry{
			ID: e.ID, OrgID: orgID, ExecutionID: e.ExecutionID, ParentID: e.ParentID, Seq: e.Seq, Depth: e.Depth, Step: e.Step,
			Type: string(e.Type), Role: string(e.Role), Content: e.Content, TurnID: e.TurnID,
			IdempotencyKey: e.IdempotencyKey, Metadata: e.Metadata, CreatedAt: e.CreatedAt,
		}
	}
	return out
}

// checkpointIDs and toolCallIDs name the IDs derived for a worker-held
// execution's checkpoints and tool calls, which the file keys by their
// natural keys: stable, and distinct from every other execution's.
var (
	checkpointIDs = uuid.MustParse("6f1c1f0e-3b1a-4c53-9a0c-5d9f0f3f7a01")
	toolCallIDs   = uuid.MustParse("0b9f5d52-8e0c-4f1e-b2a4-6a7c3d2e9b02")
)

// storeCheckpoint is c with the ID derived for it: the file keys a
// checkpoint by its execution and sequence, and holds no ID.
func storeCheckpoint(c entrystore.Checkpoint) entrystore.Checkpoint {
	c.ID = uuid.NewSHA1(checkpointIDs, []byte(c.ExecutionID+"/"+strconv.Itoa(c.Sequence))).String()
	return c
}

func storeToolCalls(orgID string, cs []workerstore.StoredCall) []entrystore.ToolCall {
	out := make([]entrystore.ToolCall, len(cs))
	for i, c := range cs {
		t := toStoreToolCall(c.ToolCallRecord)
		t.ID = uuid.NewSHA1(toolCallIDs, []byte(c.ExecutionID+"/"+c.MessageID+"/"+c.ToolCallID)).String()
		t.OrgID, t.CreatedAt, t.UpdatedAt = orgID, c.CreatedAt, c.UpdatedAt
		out[i] = t
	}
	return out
}

// usageByModel sums model calls' usage by model, as
// entrystore.ExecutionUsage does in SQL: a call's record is an llm_call
// entry's metadata or the answer's metadata.llmCall, its usage the
// record's or the answer's.
func usageByModel(es []workerstore.Stored) []entrystore.UsageLine {
	type usage struct {
		Input, Output, CacheRead, CacheWrite int64
		Cost                                 *float64
		Unpriced                             bool
	}
	type record struct {
		Model struct {
			Provider string `json:"provider"`
			ModelID  string `json:"modelId"`
		} `json:"model"`
		Cost  *float64 `json:"cost"`
		Usage *usage   `json:"usage"`
	}
	var lines []entrystore.UsageLine
	at := map[string]int{}
	for _, e := range es {
		var m record
		var u usage
		var content struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
			Usage    *usage `json:"usage"`
		}
		_ = json.Unmarshal(e.Content, &content)
		if e.Type == agentsdk.EntryLLMCall {
			_ = json.Unmarshal(e.Metadata, &m)
			if m.Usage != nil {
				u = *m.Usage
			}
		} else {
			var meta struct {
				LLMCall record `json:"llmCall"`
			}
			_ = json.Unmarshal(e.Metadata, &meta)
			m = meta.LLMCall
			if content.Usage != nil {
				u = *content.Usage
			}
		}
		key := cmp.Or(m.Model.Provider, content.Provider) + "/" + cmp.Or(m.Model.ModelID, content.Model)
		i, ok := at[key]
		if !ok {
			i = len(lines)
			at[key] = i
			lines = append(lines, entrystore.UsageLine{Key: key})
		}
		l := &lines[i]
		l.Calls++
		l.Input += u.Input
		l.Output += u.Output
		l.CacheRead += u.CacheRead
		l.CacheWrite += u.CacheWrite
		switch {
		case m.Cost != nil:
			l.Cost += *m.Cost
		case u.Cost != nil:
			l.Cost += *u.Cost
		}
		l.Unpriced = l.Unpriced || u.Unpriced
	}
	slices.SortFunc(lines, func(a, b entrystore.UsageLine) int { return strings.Compare(a.Key, b.Key) })
	return lines
}

// HeldReaderWorkflow is the workflow type of a worker's held reader
// (client.HeldReaderWorkflow).
const HeldReaderWorkflow = client.HeldReaderWorkflow
