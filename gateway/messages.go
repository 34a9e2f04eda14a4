package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
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
	if err := dec.Decode(&c); err != nil || c.Leaf == "" || c.Depth < 0 {
		return messagesCursor{}, invalid("bad cursor")
	}
	return c, nil
}

// ListMessages pages over the active path: the execution's row names its
// leaf (every append moves it), and each page is read from the store as
// one keyset range of the path, never the whole path.
func (s *service) ListMessages(ctx context.Context, req *pb.ListMessagesRequest) (*pb.ListMessagesResponse, error) {
	ex, cs, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	p, err := page(req.GetPageSize(), "")
	if err != nil {
		return nil, err
	}
	cur := messagesCursor{Leaf: ex.LeafEntryID, Depth: -1}
	if c := req.GetCursor(); c != "" {
		if cur, err = decodeMessagesCursor(c); err != nil {
			return nil, err
		}
	}
	out := &pb.ListMessagesResponse{LeafEntryId: cur.Leaf}
	if cur.Leaf == "" {
		return out, nil
	}
	es, more, err := cs.PathPage(ctx, ex.OrgID, ex.ID, cur.Leaf, cur.Depth, p.Limit, string(agentsdk.EntryMessage))
	if errors.Is(err, entrystore.ErrNotFound) {
		return nil, invalid("bad cursor")
	}
	if err != nil {
		return nil, toStatus(s.log, "load the active path", err)
	}
	for _, e := range es {
		if m, ok := toMessage(e); ok {
			out.Messages = append(out.Messages, m)
		}
	}
	if more {
		out.NextCursor = messagesCursor{Leaf: cur.Leaf, Depth: es[len(es)-1].Depth}.encode()
	}
	return out, nil
}
