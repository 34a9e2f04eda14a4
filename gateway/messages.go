package gateway

import (
	"context"
	"errors"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// messagesCursor pins the leaf of the path being paged, so pages stay on
// one branch while the agent appends, and holds the depth of the last
// message sent: a position on that path, which never changes.
type messagesCursor struct {
	Leaf  string `json:"l"`
	Depth int    `json:"d"`
}

func (c messagesCursor) valid() bool { return c.Leaf != "" && c.Depth >= 0 }

// ListMessages pages over the active path: the execution's row names its
// leaf (every append moves it), and each page is read from the store as
// one keyset range of the path, never the whole path.
func (s *service) ListMessages(ctx context.Context, req *pb.ListMessagesRequest) (*pb.ListMessagesResponse, error) {
	ex, cs, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	p, err := s.page(req.GetPageSize(), "")
	if err != nil {
		return nil, err
	}
	cur, err := decodeCursor(req.GetCursor(), messagesCursor{Leaf: ex.LeafEntryID, Depth: -1}, messagesCursor.valid)
	if err != nil {
		return nil, err
	}
	out := &pb.ListMessagesResponse{LeafEntryId: cur.Leaf}
	if cur.Leaf == "" {
		return out, nil
	}
	es, more, err := cs.PathPage(ctx, ex.OrgID, ex.ID, cur.Leaf, cur.Depth, p.Limit, p.Bytes, string(agentsdk.EntryMessage))
	if errors.Is(err, entrystore.ErrNotFound) {
		return nil, invalid("cursor %q is not a nextCursor of this list", req.GetCursor())
	}
	if err != nil {
		return nil, toStatus(s.log, "load the active path", err)
	}
	budget := s.newPageBudget()
	for i, e := range es {
		m, ok := toMessage(e)
		if !ok {
			continue
		}
		if !budget.take(m) {
			// The message past the budget starts the next page.
			more, es = true, es[:i]
			break
		}
		out.Messages = append(out.Messages, m)
	}
	if more {
		out.NextCursor = encodeCursor(messagesCursor{Leaf: cur.Leaf, Depth: es[len(es)-1].Depth})
	}
	return out, nil
}
