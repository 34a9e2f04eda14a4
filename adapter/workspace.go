package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
)

// WorkspaceSnapshots configure snapshots of the builtin tools'
// workspaces on the conversation tree: at every checkpoint of an
// execution that has a workspace, its files are recorded as a manifest
// against the checkpoint's leaf entry, each file's bytes stored once in
// the content store by sha256 (a file unchanged since the last
// checkpoint costs nothing new). A fork or a resume starts with the
// workspace of the entry it continues from, and a segment that begins on
// a worker without the execution's workspace (the worker that held it
// was replaced) gets it back from its latest snapshot.
type WorkspaceSnapshots struct {
	// Root is the workspaces' root, the builtin tools' Options.Root; ""
	// turns snapshots off.
	Root string
	// Limits bound a snapshot (files, bytes, ignored paths): past them
	// the manifest is recorded as truncated, and the turn goes on.
	Limits workspace.SnapshotLimits
	// Logger is told of a snapshot that could not be taken (the turn
	// goes on without one); default slog.Default().
	Logger *slog.Logger
}

// snapshots is engine.Workspaces over the Postgres store's content and
// snapshot rows.
type snapshots struct {
	es  *entrystore.Store
	ws  workspace.Workspaces
	lim workspace.SnapshotLimits
	log *slog.Logger
}

var _ engine.Workspaces = (*snapshots)(nil)

func newSnapshots(es *entrystore.Store, o WorkspaceSnapshots) *snapshots {
	if o.Root == "" {
		return nil
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &snapshots{es: es, ws: workspace.Workspaces{Root: o.Root}, lim: o.Limits, log: o.Logger}
}

// Capture records the execution's workspace against leafID. An
// execution without a workspace on this worker, or whose entries this
// store does not hold (worker-held), records nothing; a leaf that has a
// snapshot already (a retried checkpoint) keeps it.
func (s *snapshots) Capture(ctx context.Context, orgID, executionID, leafID string) error {
	w, err := s.ws.OpenExisting(executionID)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		s.log.Warn("workspace snapshot: open", "execution", executionID, "error", err)
		return nil
	}
	defer w.Close()
	_, found, err := s.es.SnapshotOf(ctx, orgID, leafID)
	if errors.Is(err, entrystore.ErrNotFound) || found {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.capture(ctx, orgID, leafID, w)
	return err
}

// capture snapshots w, stores the files the content store lacks and the
// manifest, and records it against leafID. A file that changed while it
// was read (a command still running) leaves this checkpoint without a
// snapshot rather than with a wrong one.
func (s *snapshots) capture(ctx context.Context, orgID, leafID string, w *workspace.Workspace) (entrystore.WorkspaceSnapshot, error) {
	m, err := w.Snapshot(s.lim)
	if err != nil {
		s.log.Warn("workspace snapshot: walk", "entry", leafID, "error", err)
		return entrystore.WorkspaceSnapshot{}, nil
	}
	bySHA := map[string]workspace.File{}
	for _, f := range m.Files {
		if f.Type == workspace.TypeFile {
			bySHA[f.SHA256] = f
		}
	}
	shas := make([]string, 0, len(bySHA))
	for sha := range bySHA {
		shas = append(shas, sha)
	}
	missing, err := s.es.MissingContent(ctx, orgID, shas)
	if err != nil {
		return entrystore.WorkspaceSnapshot{}, err
	}
	for _, sha := range missing {
		data, err := w.ReadSnapshotFile(bySHA[sha])
		if err != nil {
			s.log.Warn("workspace snapshot: read", "entry", leafID, "error", err)
			return entrystore.WorkspaceSnapshot{}, nil
		}
		if _, _, err := s.es.PutContent(ctx, orgID, data, ""); err != nil {
			return entrystore.WorkspaceSnapshot{}, err
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return entrystore.WorkspaceSnapshot{}, fmt.Errorf("adapter: workspace snapshot: %w", err)
	}
	id, _, err := s.es.PutContent(ctx, orgID, body, entrystore.ManifestMediaType)
	if err != nil {
		return entrystore.WorkspaceSnapshot{}, err
	}
	snap, err := s.es.PutSnapshot(ctx, entrystore.WorkspaceSnapshot{OrgID: orgID, EntryID: leafID, Manifest: id,
		Files: len(m.Files), Bytes: m.TotalBytes(), Truncated: m.Truncated})
	if errors.Is(err, entrystore.ErrNotFound) {
		return snap, nil
	}
	return snap, err
}

// Restore makes the execution's workspace what it was at entryID; with
// no snapshot on entryID's path it changes nothing.
func (s *snapshots) Restore(ctx context.Context, orgID, executionID, entryID string) error {
	snap, err := s.es.NearestSnapshot(ctx, orgID, entryID)
	if errors.Is(err, entrystore.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	m, err := aclient.WorkspaceManifest(ctx, s.es, orgID, snap.Manifest)
	if errors.Is(err, entrystore.ErrNotFound) || errors.Is(err, workspace.ErrBadManifest) {
		s.log.Error("workspace restore: no manifest", "execution", executionID, "entry", entryID, "error", err)
		return nil
	}
	if err != nil {
		return err
	}
	w, err := s.ws.Open(executionID)
	if err != nil {
		s.log.Error("workspace restore: open", "execution", executionID, "error", err)
		return nil
	}
	defer w.Close()
	var storeErr error
	err = w.Restore(m, s.lim, func(sha string) ([]byte, error) {
		data, _, err := s.es.GetContent(ctx, orgID, sha)
		if err != nil && !errors.Is(err, entrystore.ErrNotFound) {
			storeErr = err
		}
		return data, err
	})
	if storeErr != nil {
		return storeErr // retried, as any store read the segment needs
	}
	if err != nil {
		// A refused manifest, a disk that cannot take the files: nothing
		// a retry would change. The execution goes on with what was
		// written, and the operator hears of it.
		s.log.Error("workspace restore: refused", "execution", executionID, "entry", entryID, "error", err)
	}
	return nil
}

// RestoreMissing restores the workspace of leafID's path when the
// execution has no workspace here.
func (s *snapshots) RestoreMissing(ctx context.Context, orgID, executionID, leafID string) error {
	if _, err := os.Lstat(s.ws.Dir(executionID)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return s.Restore(ctx, orgID, executionID, leafID)
}
