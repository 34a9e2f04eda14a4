package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// ForkRequest forks an execution at one of its entries.
type ForkRequest struct {
	OrgID, ExecutionID, EntryID string
	// UserPrompt is the fork's first user message, under the entry.
	UserPrompt string
	// Config, when set, replaces the source's configuration (models,
	// tools, …); nil keeps it.
	Config *agentsdk.Config
	// NewID is the fork's execution ID; "" makes one. Set, the fork is
	// repeat-safe: a repeat finds the execution the first call made.
	NewID string
}

// ErrForkPoint: the entry cannot start a fork. It is an
// entrystore.ErrInvalid.
var ErrForkPoint = fmt.Errorf("%w: cannot fork there", entrystore.ErrInvalid)

// Fork starts a new execution that shares the source's conversation up to
// the entry, by reference (no entry or content is copied), then goes on
// with UserPrompt: forkedFrom and forkedFromEntry say where it came from,
// and the source is untouched. The entry must be on the source's
// conversation and not an answer whose tool calls are unanswered there
// (fork at its last tool result instead). A fork counts against the
// organization's maxRunning quota (StartRequest.WithinQuota).
func (c *Client) Fork(ctx context.Context, req ForkRequest) (entrystore.Execution, error) {
	src, err := c.es.GetExecution(ctx, req.OrgID, req.ExecutionID)
	if err != nil {
		return src, err
	}
	if src.LeafEntryID == "" {
		return src, fmt.Errorf("client: fork %s: %w: the execution has no entries", src.ID, ErrForkPoint)
	}
	path, err := c.es.Path(ctx, src.OrgID, src.LeafEntryID)
	if err != nil {
		return src, fmt.Errorf("client: fork %s: %w", src.ID, err)
	}
	i := slices.IndexFunc(path, func(e entrystore.Entry) bool { return e.ID == req.EntryID })
	if i < 0 {
		return src, fmt.Errorf("client: fork %s: entry %s: %w", src.ID, req.EntryID, entrystore.ErrNotFound)
	}
	if e := path[i]; e.Type == string(agentsdk.EntryMessage) && e.Role == string(agentsdk.RoleAssistant) {
		var m agentsdk.Message
		if json.Unmarshal(e.Content, &m) == nil && len(m.ToolCalls()) > 0 {
			return src, fmt.Errorf("client: fork %s: %w: entry %s calls tools; fork at its last tool result", src.ID, ErrForkPoint, e.ID)
		}
	}
	var cfg agentsdk.Config
	if err := json.Unmarshal(src.Config, &cfg); err != nil {
		return src, fmt.Errorf("client: fork %s: config: %w", src.ID, err)
	}
	if req.Config != nil {
		cfg = *req.Config
	}
	return c.Start(ctx, StartRequest{
		OrgID: src.OrgID, Kind: src.Kind, DefinitionID: src.DefinitionID, Config: cfg, UserPrompt: req.UserPrompt,
		Metadata: src.Metadata, ForkedFrom: src.ID, ResumeLeafID: req.EntryID, ExecutionID: req.NewID, WithinQuota: true,
		// Its steps go on from the entry's, as its messages' do: a step
		// numbers a message and the tool calls of its turn alike.
		StepCount: path[i].Step,
	})
}
