package gateway

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
)

// branchSummary has the definition's model summarise the path a branch to
// entryID abandons, and returns the branch_summary entry written.
func (s *service) branchSummary(ctx context.Context, ex entrystore.Execution, entryID string) (entrystore.Entry, error) {
	return entrystore.Entry{}, status.Error(codes.Unimplemented, "branch summaries are not served yet")
}
