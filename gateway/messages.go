package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// maxForwardSteps bounds the walk from the latest checkpoint to the live
// leaf; a checkpoint is written every turn, so the walk is a few entries.
const maxForwardSteps = 10_000

// messagesCursor pins the leaf of the path being paged, so pages stay on
// one branch while the agent appends.
type messagesCursor struct {
	Leaf   string `json:"l"`
	Offset int    `json:"o"`
}

func (c messagesCursor) encode() string {
	b, _ := json.Marshal(c) // plain fields cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeMessagesCursor(s string) (messagesCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return messagesCursor{}, invalid("bad cursor")
	}
	var c messagesCursor
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Leaf == "" || c.Offset < 0 {
		return messagesCursor{}, invalid("bad cursor")
	}
	return c, nil
}

// activeLeaf is the end of the execution's active path: from the latest
// checkpoint's leaf (or the root before the first checkpoint), the newest
// child at each step. "" when the execution has no entries yet.
func (s *service) activeLeaf(ctx context.Context, orgID, execID string) (string, error) {
	leaf := ""
	cp, err := s.es.LatestCheckpoint(ctx, orgID, execID)
	switch {
	case err == nil:
		leaf = cp.LeafEntryID
	case !errors.Is(err, entrystore.ErrNotFound):
		return "", err
	}
	if leaf == "" {
		first, _, err := s.es.ListEntries(ctx, orgID, execID, entrystore.Page{Limit: 1})
		if err != nil || len(first) == 0 {
			return "", err
		}
		leaf = first[0].ID
	}
	for range maxForwardSteps {
		kids, err := s.es.Children(ctx, orgID, leaf)
		if err != nil {
			return "", err
		}
		if len(kids) == 0 {
			return leaf, nil
		}
		newest := kids[0]
		for _, k := range kids[1:] {
			if k.Seq > newest.Seq {
				newest = k
			}
		}
		leaf = newest.ID
	}
	return leaf, nil
}

func (s *service) ListMessages(ctx context.Context, req *pb.ListMessagesRequest) (*pb.ListMessagesResponse, error) {
	orgID, p, err := s.scoped(ctx, req.GetOrg(), req.GetExecutionId(), req.GetPageSize(), "")
	if err != nil {
		return nil, err
	}
	var cur messagesCursor
	if c := req.GetCursor(); c != "" {
		if cur, err = decodeMessagesCursor(c); err != nil {
			return nil, err
		}
	} else if cur.Leaf, err = s.activeLeaf(ctx, orgID, req.GetExecutionId()); err != nil {
		return nil, toStatus(s.log, "find the active leaf", err)
	}
	out := &pb.ListMessagesResponse{LeafEntryId: cur.Leaf}
	if cur.Leaf == "" {
		return out, nil
	}
	path, err := s.es.Path(ctx, orgID, cur.Leaf)
	if errors.Is(err, entrystore.ErrNotFound) {
		return nil, invalid("bad cursor")
	}
	if err != nil {
		return nil, toStatus(s.log, "load the active path", err)
	}
	if path[len(path)-1].ExecutionID != req.GetExecutionId() {
		return nil, invalid("bad cursor")
	}
	var msgs []*pb.Message
	for _, e := range path {
		if m, ok := toMessage(e); ok {
			msgs = append(msgs, m)
		}
	}
	limit := p.Limit
	if limit == 0 {
		limit = entrystore.DefaultPageLimit
	}
	limit = min(limit, entrystore.MaxPageLimit)
	if cur.Offset > len(msgs) {
		return nil, invalid("bad cursor")
	}
	end := min(cur.Offset+limit, len(msgs))
	out.Messages = msgs[cur.Offset:end]
	if end < len(msgs) {
		out.NextCursor = messagesCursor{Leaf: cur.Leaf, Offset: end}.encode()
	}
	return out, nil
}
