package adapter_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
	"github.com/agentree/agentree/entrystore"
)

// fileCall is a tool call of one of the builtin tools.
func fileCall(id, tool string, args any) agentsdk.ToolCall {
	raw, _ := json.Marshal(args)
	return agentsdk.ToolCall{ID: id, Name: tool, Arguments: raw}
}

// coder is a scripted model that follows the turns of its conversation's
// first user message (by the number of answers since), and answers a
// later user message (a fork's, a resume's) with turns of its own:
// answer i of a conversation goes on from its latest user message.
func coder(first []scripted.Turn, later func(prompt string, i int, req agentsdk.ModelRequest) scripted.Turn) *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		users, since, prompt := 0, 0, ""
		for _, m := range req.Messages {
			switch m.Role {
			case agentsdk.RoleUser:
				users, since, prompt = users+1, 0, m.Text()
			case agentsdk.RoleAssistant:
				since++
			}
		}
		if users > 1 {
			return later(prompt, since, req)
		}
		if since < len(first) {
			return first[since]
		}
		return scripted.Turn{Text: "Nothing more."}
	})
}

// lastToolResult is the text of the last tool result of the request.
func lastToolResult(req agentsdk.ModelRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == agentsdk.RoleToolResult {
			return m.Text()
		}
	}
	return ""
}

// workspaceHarness runs the builtin tools (bash without isolation, so the
// test does not depend on the host's user namespaces) in a workspace root
// of the test's, with snapshots on, every tool call allowed.
func workspaceHarness(t *testing.T, model agentsdk.Provider, lim workspace.SnapshotLimits) (*harness, string) {
	root := filepath.Join(t.TempDir(), "workspaces")
	tools, err := builtin.Tools(builtin.Options{Root: root, Bash: builtin.BashOptions{Isolation: builtin.IsolationNone}})
	require.NoError(t, err)
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: tools,
		ToolPolicy: agentsdk.Policies{"*": agentsdk.PolicyAuto}, ReconcileInterval: -1,
		Workspaces: adapter.WorkspaceSnapshots{Root: root, Limits: lim}}, false)
	return h, root
}

// toolResults are the tool_result entries of the execution's path, in
// order.
func toolResults(t *testing.T, h *harness, leafID string) []entrystore.Entry {
	path, err := h.es.Path(context.Background(), h.org.ID, leafID)
	require.NoError(t, err)
	var out []entrystore.Entry
	for _, e := range path {
		if e.Role == string(agentsdk.RoleToolResult) {
			out = append(out, e)
		}
	}
	return out
}

// manifestAt is the manifest recorded against entryID itself.
func manifestAt(t *testing.T, h *harness, entryID string) (entrystore.WorkspaceSnapshot, workspace.Manifest) {
	snap, ok, err := h.es.SnapshotOf(context.Background(), h.org.ID, entryID)
	require.NoError(t, err)
	require.True(t, ok, "entry %s has no workspace snapshot", entryID)
	m, err := aclient.WorkspaceManifest(context.Background(), h.es, h.org.ID, snap.Manifest)
	require.NoError(t, err)
	return snap, m
}

func fileOf(m workspace.Manifest, p string) (workspace.File, bool) {
	for _, f := range m.Files {
		if f.Path == p {
			return f, true
		}
	}
	return workspace.File{}, false
}

// TestForkRestoresTheWorkspace: turn 1 writes a.txt, turn 2 changes it
// and writes b.txt; each turn's checkpoint records the workspace against
// its leaf. A fork at turn 1's entry starts in a workspace with a.txt as
// turn 1 left it and no b.txt — its agent reads it there — and the
// source's workspace is untouched.
func TestForkRestoresTheWorkspace(t *testing.T) {
	model := coder([]scripted.Turn{
		{ToolCalls: []agentsdk.ToolCall{fileCall("w1", builtin.WriteFileTool, map[string]string{"path": "a.txt", "content": "turn one\n"})}},
		{ToolCalls: []agentsdk.ToolCall{
			fileCall("w2", builtin.WriteFileTool, map[string]string{"path": "a.txt", "content": "turn two\n"}),
			fileCall("w3", builtin.WriteFileTool, map[string]string{"path": "b.txt", "content": "bee\n"}),
		}},
		{Text: "Both written."},
	}, func(_ string, i int, req agentsdk.ModelRequest) scripted.Turn {
		switch i {
		case 0:
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{fileCall("r1", builtin.ReadFileTool, map[string]string{"path": "a.txt"})}}
		case 1:
			return scripted.Turn{Text: "a.txt: " + lastToolResult(req),
				ToolCalls: []agentsdk.ToolCall{fileCall("l1", builtin.ListFilesTool, map[string]string{"path": "."})}}
		default:
			return scripted.Turn{Text: "files: " + lastToolResult(req)}
		}
	})
	h, root := workspaceHarness(t, model, workspace.SnapshotLimits{})
	ex := h.start(agentsdk.Config{Tools: builtin.ToolNames}, "write the files")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)

	results := toolResults(t, h, res.LeafID)
	require.Len(t, results, 3)
	turn1 := results[0]
	_, m1 := manifestAt(t, h, turn1.ID)
	a1, ok := fileOf(m1, "a.txt")
	require.True(t, ok)
	sum := sha256.Sum256([]byte("turn one\n"))
	require.Equal(t, hex.EncodeToString(sum[:]), a1.SHA256)
	_, ok = fileOf(m1, "b.txt")
	require.False(t, ok, "turn 1 wrote no b.txt")
	_, m2 := manifestAt(t, h, results[2].ID)
	_, ok = fileOf(m2, "b.txt")
	require.True(t, ok, "turn 2's checkpoint has b.txt")

	fork, err := h.ac.Fork(context.Background(), aclient.ForkRequest{OrgID: h.org.ID, ExecutionID: ex.ID, EntryID: turn1.ID,
		UserPrompt: "read a.txt"})
	require.NoError(t, err)
	fres := h.wait(fork.ID, time.Minute)
	require.Equal(t, "COMPLETED", fres.Status, fres.Error)
	forkDir := filepath.Join(root, fork.ID)
	got, err := os.ReadFile(filepath.Join(forkDir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "turn one\n", string(got))
	_, err = os.Stat(filepath.Join(forkDir, "b.txt"))
	require.ErrorIs(t, err, os.ErrNotExist, "the fork is at turn 1: no b.txt")
	require.NotContains(t, fres.Text, "b.txt")

	msgs := h.path(fres.LeafID)
	var read string
	for _, m := range msgs {
		if m.Role == agentsdk.RoleAssistant && strings.HasPrefix(m.Text(), "a.txt: ") {
			read = m.Text()
		}
	}
	require.Contains(t, read, "turn one", "the fork's agent read the restored file")

	src, err := os.ReadFile(filepath.Join(root, ex.ID, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "turn two\n", string(src), "the source's workspace is its own")
}

// orgContentRows counts the organization's content rows.
func orgContentRows(t *testing.T, h *harness) int {
	var n int
	require.NoError(t, h.es.Pool().QueryRow(context.Background(), `SELECT count(*) FROM content WHERE org_id = $1`, h.org.ID).Scan(&n))
	return n
}

// TestUnchangedFilesCostNothing: turn 1 writes three files, turn 2
// changes one. Turn 2's snapshot stores exactly one new file blob (and
// its manifest); the final checkpoint, on an unchanged workspace,
// stores nothing new at all and records the same manifest.
func TestUnchangedFilesCostNothing(t *testing.T) {
	write := func(id, p, content string) agentsdk.ToolCall {
		return fileCall(id, builtin.WriteFileTool, map[string]string{"path": p, "content": content})
	}
	model := coder([]scripted.Turn{
		{ToolCalls: []agentsdk.ToolCall{write("w1", "a.txt", "a\n"), write("w2", "src/b.txt", "b\n"), write("w3", "src/c.txt", "c\n")}},
		{ToolCalls: []agentsdk.ToolCall{write("w4", "src/b.txt", "b changed\n")}},
		{Text: "Done."},
	}, nil)
	h, _ := workspaceHarness(t, model, workspace.SnapshotLimits{})
	ex := h.start(agentsdk.Config{Tools: builtin.ToolNames}, "write")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)

	results := toolResults(t, h, res.LeafID)
	require.Len(t, results, 4)
	s1, m1 := manifestAt(t, h, results[2].ID)
	s2, m2 := manifestAt(t, h, results[3].ID)
	s3, _ := manifestAt(t, h, res.LeafID)
	require.Equal(t, s2.Manifest, s3.Manifest, "an unchanged workspace is the same manifest")
	require.Equal(t, 4, s1.Files) // a.txt, src, src/b.txt, src/c.txt
	shas := map[string]bool{}
	for _, m := range []workspace.Manifest{m1, m2} {
		for _, f := range m.Files {
			if f.SHA256 != "" {
				shas[f.SHA256] = true
			}
		}
	}
	require.Len(t, shas, 4, "three files, then one changed")
	// Every content row of the organization: three files and a manifest,
	// then one file and a manifest. Nothing else of these runs is content.
	require.Equal(t, 6, orgContentRows(t, h))
}

// TestSymlinkOutIsStoredAsALink: a command makes links to /etc/passwd
// and to / in its workspace. The snapshot records them as links, with
// their text and no bytes — /etc/passwd's content is nowhere in the
// content store — and a fork gets the links back as links.
func TestSymlinkOutIsStoredAsALink(t *testing.T) {
	model := coder([]scripted.Turn{
		{ToolCalls: []agentsdk.ToolCall{fileCall("b1", builtin.BashTool,
			builtin.BashArgs{Command: "ln -s /etc/passwd passwd && ln -s / host && echo hi > note.txt"})}},
		{Text: "Linked."},
	}, func(string, int, agentsdk.ModelRequest) scripted.Turn { return scripted.Turn{Text: "Forked."} })
	h, root := workspaceHarness(t, model, workspace.SnapshotLimits{})
	ex := h.start(agentsdk.Config{Tools: builtin.ToolNames}, "link")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)

	_, m := manifestAt(t, h, res.LeafID)
	require.Equal(t, []workspace.File{
		{Path: "host", Type: workspace.TypeSymlink, Mode: 0o777, Target: "/"},
		{Path: "note.txt", Type: workspace.TypeFile, Mode: 0o600, Size: 3, SHA256: m.Files[1].SHA256},
		{Path: "passwd", Type: workspace.TypeSymlink, Mode: 0o777, Target: "/etc/passwd"},
	}, m.Files)
	if passwd, err := os.ReadFile("/etc/passwd"); err == nil {
		sum := sha256.Sum256(passwd)
		_, _, err := h.es.GetContent(context.Background(), h.org.ID, hex.EncodeToString(sum[:]))
		require.ErrorIs(t, err, entrystore.ErrNotFound, "the link's target was never read")
	}

	fork, err := h.ac.Fork(context.Background(), aclient.ForkRequest{OrgID: h.org.ID, ExecutionID: ex.ID, EntryID: res.LeafID,
		UserPrompt: "go on"})
	require.NoError(t, err)
	require.Equal(t, "COMPLETED", h.wait(fork.ID, time.Minute).Status)
	target, err := os.Readlink(filepath.Join(root, fork.ID, "passwd"))
	require.NoError(t, err)
	require.Equal(t, "/etc/passwd", target)
}

// TestRestoreRefusesAManifestPathOutside: a manifest whose path climbs
// out of the workspace (one no capture makes: written here into the
// store by hand) is refused when a fork would restore it: nothing is
// written outside, and the fork runs on.
func TestRestoreRefusesAManifestPathOutside(t *testing.T) {
	model := coder([]scripted.Turn{{Text: "Hello."}},
		func(string, int, agentsdk.ModelRequest) scripted.Turn { return scripted.Turn{Text: "Forked."} })
	h, root := workspaceHarness(t, model, workspace.SnapshotLimits{})
	ex := h.start(agentsdk.Config{Tools: builtin.ToolNames}, "hello")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)

	ctx := context.Background()
	data := []byte("escaped\n")
	sha, _, err := h.es.PutContent(ctx, h.org.ID, data, "")
	require.NoError(t, err)
	for i, bad := range []string{"../escape.txt", "/tmp/escape-" + ex.ID} {
		body, err := json.Marshal(workspace.Manifest{Files: []workspace.File{
			{Path: bad, Type: workspace.TypeFile, Mode: 0o600, Size: int64(len(data)), SHA256: sha}}})
		require.NoError(t, err)
		id, _, err := h.es.PutContent(ctx, h.org.ID, body, entrystore.ManifestMediaType)
		require.NoError(t, err)
		// On the path's first entry (the user's), which no checkpoint has.
		first := firstEntry(t, h, res.LeafID)
		if i == 0 {
			_, err = h.es.PutSnapshot(ctx, entrystore.WorkspaceSnapshot{OrgID: h.org.ID, EntryID: first, Manifest: id, Files: 1})
			require.NoError(t, err)
		} else {
			_, err = h.es.Pool().Exec(ctx, `UPDATE agent_workspace_snapshot SET manifest_sha256 = decode($1, 'hex') WHERE entry_id = $2`, id, first)
			require.NoError(t, err)
		}
		fork, err := h.ac.Fork(ctx, aclient.ForkRequest{OrgID: h.org.ID, ExecutionID: ex.ID, EntryID: first, UserPrompt: fmt.Sprint("fork ", i)})
		require.NoError(t, err)
		require.Equal(t, "COMPLETED", h.wait(fork.ID, time.Minute).Status)
	}
	_, err = os.Stat(filepath.Join(root, "escape.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = os.Stat("/tmp/escape-" + ex.ID)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// firstEntry is the ID of the path's first entry.
func firstEntry(t *testing.T, h *harness, leafID string) string {
	path, err := h.es.Path(context.Background(), h.org.ID, leafID)
	require.NoError(t, err)
	return path[0].ID
}

// readBack is a later turn that reads a.txt and answers with what it read.
func readBack(_ string, i int, req agentsdk.ModelRequest) scripted.Turn {
	if i == 0 {
		return scripted.Turn{ToolCalls: []agentsdk.ToolCall{fileCall("r1", builtin.ReadFileTool, map[string]string{"path": "a.txt"})}}
	}
	return scripted.Turn{Text: "read: " + lastToolResult(req)}
}

// TestResumeRestoresTheWorkspace: an execution that wrote a.txt pauses on
// its step budget; its resume, a new execution with a directory of its
// own, starts with the paused run's files and reads a.txt.
func TestResumeRestoresTheWorkspace(t *testing.T) {
	model := coder([]scripted.Turn{
		{ToolCalls: []agentsdk.ToolCall{fileCall("w1", builtin.WriteFileTool, map[string]string{"path": "a.txt", "content": "before the pause\n"})}},
		{Text: "Never reached before the pause."},
	}, readBack)
	h, root := workspaceHarness(t, model, workspace.SnapshotLimits{})
	ex := h.start(agentsdk.Config{Tools: builtin.ToolNames, MaxSteps: 1}, "write")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "PAUSED", res.Status, res.Error)

	resumed, err := h.ac.Resume(context.Background(), aclient.ResumeRequest{OrgID: h.org.ID, ExecutionID: ex.ID, Message: "read a.txt", MaxSteps: 5})
	require.NoError(t, err)
	require.NotEqual(t, ex.ID, resumed.ID)
	rres := h.wait(resumed.ID, time.Minute)
	require.Equal(t, "COMPLETED", rres.Status, rres.Error)
	require.Contains(t, rres.Text, "before the pause")
	got, err := os.ReadFile(filepath.Join(root, resumed.ID, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "before the pause\n", string(got))
}

// TestReplacedWorkerGetsTheWorkspaceBack: a multi-turn execution wrote
// a.txt and waits; its workspace directory is gone (the worker that held
// it was replaced, or its files swept). The next message's segment
// begins by restoring the latest snapshot, and the agent reads a.txt.
func TestReplacedWorkerGetsTheWorkspaceBack(t *testing.T) {
	model := coder([]scripted.Turn{
		{ToolCalls: []agentsdk.ToolCall{fileCall("w1", builtin.WriteFileTool, map[string]string{"path": "a.txt", "content": "kept on the tree\n"})}},
		{Text: "Written."},
	}, readBack)
	h, root := workspaceHarness(t, model, workspace.SnapshotLimits{})
	ex := h.start(agentsdk.Config{Tools: builtin.ToolNames, Mode: agentsdk.ModeMultiTurn}, "write")
	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	require.NoError(t, os.RemoveAll(filepath.Join(root, ex.ID)))

	_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"read a.txt"}`))
	require.NoError(t, err)
	var text string
	h.waitRow(ex.ID, time.Minute, func(row entrystore.Execution) bool {
		if row.Status != entrystore.StatusWaiting || row.LeafEntryID == "" {
			return false
		}
		msgs := h.path(row.LeafEntryID)
		text = msgs[len(msgs)-1].Text()
		return strings.HasPrefix(text, "read: ")
	}, "answered the second message")
	require.Contains(t, text, "kept on the tree")
	got, err := os.ReadFile(filepath.Join(root, ex.ID, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "kept on the tree\n", string(got))
}
