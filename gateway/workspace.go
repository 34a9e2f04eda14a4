package gateway

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Workspace snapshots (issue 40): the coding tools' workspace as each
// checkpoint recorded it (adapter.WorkspaceSnapshots), read back by entry.
// The workspace at an entry is its own snapshot or its nearest
// ancestor's: what a fork at that entry starts with.

// maxWorkspaceRead is the largest file GetWorkspaceFile returns: a JSON
// answer holds it whole.
const maxWorkspaceRead = 8 << 20

// workspaceAt is the snapshot of the workspace at entryID, an entry on
// the execution's conversation, and its manifest.
func (s *service) workspaceAt(ctx context.Context, ex entrystore.Execution, entryID string) (*pb.WorkspaceSnapshot, workspace.Manifest, error) {
	if entryID == "" {
		return nil, workspace.Manifest{}, invalid("entryId is required")
	}
	e, err := s.es.GetEntry(ctx, ex.OrgID, entryID)
	if err == nil && e.ExecutionID != ex.ID {
		err = s.onPath(ctx, s.es, ex, e)
	}
	if err != nil {
		return nil, workspace.Manifest{}, s.notFound(err, "entry", entryID)
	}
	snap, err := s.es.NearestSnapshot(ctx, ex.OrgID, entryID)
	if errors.Is(err, entrystore.ErrNotFound) {
		return nil, workspace.Manifest{}, status.Errorf(codes.NotFound,
			"entry %q has no workspace snapshot: its execution had no workspace by then", entryID)
	}
	if err != nil {
		return nil, workspace.Manifest{}, toStatus(s.log, "workspace snapshot", err)
	}
	m, err := aclient.WorkspaceManifest(ctx, s.es, ex.OrgID, snap.Manifest)
	if err != nil {
		return nil, workspace.Manifest{}, toStatus(s.log, "workspace manifest", err)
	}
	return &pb.WorkspaceSnapshot{EntryId: entryID, SnapshotEntryId: snap.EntryID, ManifestId: snap.Manifest,
		Files: n32(snap.Files), Bytes: snap.Bytes, Truncated: m.Truncated, TruncatedReason: m.TruncatedReason,
		CreatedAt: ts(snap.CreatedAt)}, m, nil
}

func toWorkspaceFile(f workspace.File) *pb.WorkspaceFileInfo {
	return &pb.WorkspaceFileInfo{Path: f.Path, Type: f.Type, Mode: f.Mode, Size: f.Size, Sha256: f.SHA256, Target: f.Target}
}

// pathCursor is a position in a path-ordered list: after this path.
type pathCursor struct {
	After string `json:"after"`
}

func (c pathCursor) valid() bool { return c.After != "" }

// pathPage reads a path-ordered list's paging fields.
func (s *service) pathPage(size int32, cursor string) (int, pathCursor, error) {
	p, err := s.page(size, "")
	if err != nil {
		return 0, pathCursor{}, err
	}
	limit := entrystore.DefaultPageLimit
	if p.Limit > 0 {
		limit = min(p.Limit, entrystore.MaxPageLimit)
	}
	cur, err := decodeCursor(cursor, pathCursor{}, pathCursor.valid)
	return limit, cur, err
}

// GetEntryWorkspace lists the workspace at an entry.
func (s *service) GetEntryWorkspace(ctx context.Context, req *pb.GetEntryWorkspaceRequest) (*pb.EntryWorkspace, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	limit, cur, err := s.pathPage(req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	snap, m, err := s.workspaceAt(ctx, ex, req.GetEntryId())
	if err != nil {
		return nil, err
	}
	out := &pb.EntryWorkspace{Snapshot: snap}
	budget := s.newPageBudget()
	files := m.Files[sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path > cur.After }):]
	for i, f := range files {
		pf := toWorkspaceFile(f)
		if i == limit || !budget.take(pf) {
			out.NextCursor = encodeCursor(pathCursor{After: files[i-1].Path})
			break
		}
		out.Files = append(out.Files, pf)
	}
	return out, nil
}

// GetWorkspaceFile reads one file of the workspace at an entry.
func (s *service) GetWorkspaceFile(ctx context.Context, req *pb.GetWorkspaceFileRequest) (*pb.WorkspaceFile, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	if req.GetPath() == "" {
		return nil, invalid("path is required: the file's path in the workspace")
	}
	snap, m, err := s.workspaceAt(ctx, ex, req.GetEntryId())
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(m.Files), func(i int) bool { return m.Files[i].Path >= req.GetPath() })
	if i == len(m.Files) || m.Files[i].Path != req.GetPath() {
		return nil, status.Errorf(codes.NotFound, "the workspace at entry %q has no file %q", req.GetEntryId(), req.GetPath())
	}
	f := m.Files[i]
	out := &pb.WorkspaceFile{File: toWorkspaceFile(f), SnapshotEntryId: snap.SnapshotEntryId}
	if f.Type != workspace.TypeFile {
		return out, nil
	}
	if f.Size > maxWorkspaceRead {
		return nil, invalid("%s is %s: a read returns files of at most %s", f.Path, workspace.Bytes(f.Size), workspace.Bytes(maxWorkspaceRead))
	}
	data, _, err := s.es.GetContent(ctx, ex.OrgID, f.SHA256)
	if err != nil {
		return nil, toStatus(s.log, "workspace file", err)
	}
	if isText(data) {
		out.Text = string(data)
	} else {
		out.Data, out.Binary = data, true
	}
	return out, nil
}

// isText: UTF-8 without NUL bytes, as diff tools tell text.
func isText(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return false
		}
	}
	return utf8.Valid(b)
}

// GetWorkspaceDiff compares the workspaces at two entries.
func (s *service) GetWorkspaceDiff(ctx context.Context, req *pb.GetWorkspaceDiffRequest) (*pb.WorkspaceDiff, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	if req.GetAgainst() == "" {
		return nil, invalid("against is required: the entry whose workspace is the old side")
	}
	limit, cur, err := s.pathPage(req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	from, old, err := s.workspaceAt(ctx, ex, req.GetAgainst())
	if err != nil {
		return nil, err
	}
	to, newer, err := s.workspaceAt(ctx, ex, req.GetEntryId())
	if err != nil {
		return nil, err
	}
	out := &pb.WorkspaceDiff{From: from, To: to}
	changes := manifestChanges(old, newer)
	for _, c := range changes {
		switch c.change {
		case changeAdded:
			out.Added++
		case changeRemoved:
			out.Removed++
		default:
			out.Modified++
		}
	}
	changes = changes[sort.Search(len(changes), func(i int) bool { return changes[i].path > cur.After }):]
	budget := s.newPageBudget()
	for i, c := range changes {
		pc, err := s.fileChange(ctx, ex.OrgID, c)
		if err != nil {
			return nil, err
		}
		if i == limit || !budget.take(pc) {
			out.NextCursor = encodeCursor(pathCursor{After: changes[i-1].path})
			break
		}
		out.Changes = append(out.Changes, pc)
	}
	return out, nil
}

// The kinds of a file's change.
const (
	changeAdded    = "added"
	changeRemoved  = "removed"
	changeModified = "modified"
)

type fileChange struct {
	path, change  string
	before, after *workspace.File
}

// manifestChanges are the files that differ between two manifests, in
// path order: both are sorted by path, so one merge pass finds them.
func manifestChanges(old, cur workspace.Manifest) []fileChange {
	var out []fileChange
	i, j := 0, 0
	for i < len(old.Files) || j < len(cur.Files) {
		switch {
		case j == len(cur.Files) || (i < len(old.Files) && old.Files[i].Path < cur.Files[j].Path):
			out = append(out, fileChange{path: old.Files[i].Path, change: changeRemoved, before: &old.Files[i]})
			i++
		case i == len(old.Files) || cur.Files[j].Path < old.Files[i].Path:
			out = append(out, fileChange{path: cur.Files[j].Path, change: changeAdded, after: &cur.Files[j]})
			j++
		default:
			if old.Files[i] != cur.Files[j] {
				out = append(out, fileChange{path: cur.Files[j].Path, change: changeModified, before: &old.Files[i], after: &cur.Files[j]})
			}
			i++
			j++
		}
	}
	return out
}

// maxDiffBytes bounds each side of a file a diff is computed for.
const maxDiffBytes = 256 << 10

// fileChange is c with its diff: unified for text files under the size
// bound, "binary files differ" for others.
func (s *service) fileChange(ctx context.Context, orgID string, c fileChange) (*pb.WorkspaceFileChange, error) {
	out := &pb.WorkspaceFileChange{Path: c.path, Change: c.change}
	var sides [2][]byte
	files := false
	for k, f := range []*workspace.File{c.before, c.after} {
		if f == nil {
			continue
		}
		if k == 0 {
			out.Before = toWorkspaceFile(*f)
		} else {
			out.After = toWorkspaceFile(*f)
		}
		if f.Type != workspace.TypeFile {
			continue
		}
		files = true
		if f.Size > maxDiffBytes {
			out.DiffOmitted = fmt.Sprintf("%s is %s, over the %s a diff is computed for", c.path, workspace.Bytes(f.Size), workspace.Bytes(maxDiffBytes))
			return out, nil
		}
		data, _, err := s.es.GetContent(ctx, orgID, f.SHA256)
		if err != nil {
			return nil, toStatus(s.log, "workspace diff", err)
		}
		if !isText(data) {
			out.Binary, out.Diff = true, "Binary files differ\n"
			return out, nil
		}
		sides[k] = data
	}
	if !files || (c.before != nil && c.after != nil && c.before.SHA256 == c.after.SHA256) {
		return out, nil // a directory, a link, or a mode change alone
	}
	a, b := "a/"+c.path, "b/"+c.path
	if c.before == nil || c.before.Type != workspace.TypeFile {
		a = "/dev/null"
	}
	if c.after == nil || c.after.Type != workspace.TypeFile {
		b = "/dev/null"
	}
	d, ok := unifiedDiff(a, b, string(sides[0]), string(sides[1]))
	if !ok {
		out.DiffOmitted = "the files differ in too many places to diff"
		return out, nil
	}
	out.Diff = d
	return out, nil
}
