package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
	"github.com/agentree/agentree/entrystore"
)

// WorkspaceManifest reads the workspace manifest stored under sha (hex
// sha256, an entrystore.WorkspaceSnapshot's Manifest) in the
// organization's content: what a worker restores from, and what the
// gateway lists and diffs. Bytes that are not a manifest are
// workspace.ErrBadManifest.
func WorkspaceManifest(ctx context.Context, es *entrystore.Store, orgID, sha string) (workspace.Manifest, error) {
	body, _, err := es.GetContent(ctx, orgID, sha)
	if err != nil {
		return workspace.Manifest{}, err
	}
	var m workspace.Manifest
	if err := json.Unmarshal(body, &m); err != nil {
		return workspace.Manifest{}, fmt.Errorf("client: workspace manifest %s: %w: %w", sha, workspace.ErrBadManifest, err)
	}
	return m, nil
}
