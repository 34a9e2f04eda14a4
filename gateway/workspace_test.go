package gateway_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
)

// workspaceCoder writes files with the real builtin tools: turn 1 writes
// a.txt, bin.dat (bytes with NULs) and keep.txt; turn 2 edits a.txt,
// rewrites bin.dat, writes c.txt and removes keep.txt with bash. A
// conversation that starts "hello" gets an answer and no tools.
func workspaceCoder() *scripted.Provider {
	call := func(id, tool string, args any) agentsdk.ToolCall {
		raw, _ := json.Marshal(args)
		return agentsdk.ToolCall{ID: id, Name: tool, Arguments: raw}
	}
	write := func(id, p, content string) agentsdk.ToolCall {
		return call(id, builtin.WriteFileTool, map[string]string{"path": p, "content": content})
	}
	turns := []scripted.Turn{
		{ToolCalls: []agentsdk.ToolCall{write("w1", "a.txt", "one\ntwo\nthree\n"), write("w2", "keep.txt", "keep\n"),
			call("b1", builtin.BashTool, builtin.BashArgs{Command: `printf 'x\000y' > bin.dat`})}},
		{ToolCalls: []agentsdk.ToolCall{
			call("e1", builtin.EditFileTool, map[string]string{"path": "a.txt", "old_text": "two", "new_text": "TWO"}),
			write("w3", "c.txt", "new file\n"),
			call("b2", builtin.BashTool, builtin.BashArgs{Command: `rm keep.txt && printf 'x\000z' > bin.dat`})}},
		{Text: "Done."},
	}
	return scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		if req.Messages[0].Text() == "hello" || turn >= len(turns) {
			return scripted.Turn{Text: "Hello."}
		}
		return turns[turn]
	})
}

func workspaceEnv(t *testing.T) *env {
	root := filepath.Join(t.TempDir(), "workspaces")
	tools, err := builtin.Tools(builtin.Options{Root: root, Bash: builtin.BashOptions{Isolation: builtin.IsolationNone}})
	require.NoError(t, err)
	return newEnv(t, envOptions{providers: []agentsdk.Provider{workspaceCoder()}, tools: tools,
		toolPolicy: agentsdk.Policies{"*": agentsdk.PolicyAuto}, workspaces: adapter.WorkspaceSnapshots{Root: root}})
}

// runTo creates a one-shot execution in the org with the key and waits
// for it to complete; it returns its path and its tool_result entries.
func (e *env) runTo(key, slug, prompt string) (string, []map[string]any) {
	e.t.Helper()
	base := "/api/orgs/" + slug + "/agent-executions"
	ex := e.ok(key, http.MethodPost, base, map[string]any{"kind": "react-agent", "userPrompt": prompt, "models": scriptedModel,
		"tools": builtin.ToolNames, "config": map[string]any{"mode": "one-shot"}})
	path := base + "/" + ex["id"].(string)
	poll(e.t, time.Minute, func() bool { return e.ok(key, http.MethodGet, path, nil)["status"] == "COMPLETED" },
		"execution %s never completed", path)
	var results []map[string]any
	for _, en := range items(e.t, e.ok(key, http.MethodGet, path+"/entries?pageSize=500", nil), "entries") {
		if en["role"] == "tool_result" {
			results = append(results, en)
		}
	}
	return path, results
}

// TestWorkspaceDiffBetweenEntries: between turn 1's and turn 2's
// entries, the diff lists a.txt modified with its unified diff, bin.dat
// modified as binary, c.txt added (a diff against /dev/null) and
// keep.txt removed, in path order, the same over pages of one; the
// listing and a file read at turn 1 show turn 1's files.
func TestWorkspaceDiffBetweenEntries(t *testing.T) {
	e := workspaceEnv(t)
	path, results := e.runTo(e.keyA, e.orgA.Slug, "write files")
	require.Len(t, results, 6)
	turn1, turn2 := results[2]["id"].(string), results[5]["id"].(string)

	diff := e.ok(e.keyA, http.MethodGet, path+"/entries/"+turn2+"/workspace-diff?against="+turn1, nil)
	require.Equal(t, turn1, diff["from"].(map[string]any)["snapshotEntryId"])
	require.Equal(t, turn2, diff["to"].(map[string]any)["snapshotEntryId"])
	require.Equal(t, []any{1.0, 1.0, 2.0}, []any{diff["added"], diff["removed"], diff["modified"]})
	changes := items(t, diff, "changes")
	var got [][2]string
	for _, c := range changes {
		got = append(got, [2]string{c["path"].(string), c["change"].(string)})
	}
	require.Equal(t, [][2]string{{"a.txt", "modified"}, {"bin.dat", "modified"}, {"c.txt", "added"}, {"keep.txt", "removed"}}, got)
	require.Equal(t, "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n", changes[0]["diff"])
	require.Equal(t, true, changes[1]["binary"])
	require.Equal(t, "Binary files differ\n", changes[1]["diff"])
	require.Equal(t, "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+new file\n", changes[2]["diff"])
	require.Nil(t, changes[2]["before"])
	require.Equal(t, "--- a/keep.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-keep\n", changes[3]["diff"])
	require.Nil(t, changes[3]["after"])

	// Paged one change at a time, the same changes.
	var paged []any
	cursor := ""
	for {
		page := e.ok(e.keyA, http.MethodGet, path+"/entries/"+turn2+"/workspace-diff?pageSize=1&against="+turn1+"&cursor="+url.QueryEscape(cursor), nil)
		paged = append(paged, page["changes"].([]any)...)
		if cursor, _ = page["nextCursor"].(string); cursor == "" {
			break
		}
	}
	require.Len(t, paged, 4)
	require.Equal(t, "keep.txt", paged[3].(map[string]any)["path"])

	// The other way round: added and removed swap.
	back := e.ok(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace-diff?against="+turn2, nil)
	require.Equal(t, []any{1.0, 1.0, 2.0}, []any{back["added"], back["removed"], back["modified"]})
	require.Equal(t, "keep.txt", items(t, back, "changes")[3]["path"])
	require.Equal(t, "added", items(t, back, "changes")[3]["change"])

	// The workspace at turn 1, and files of it.
	ws := e.ok(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace", nil)
	var files []string
	for _, f := range items(t, ws, "files") {
		files = append(files, f["path"].(string))
	}
	require.Equal(t, []string{"a.txt", "bin.dat", "keep.txt"}, files)
	f := e.ok(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace/file?path=a.txt", nil)
	require.Equal(t, "one\ntwo\nthree\n", f["text"])
	bin := e.ok(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace/file?path=bin.dat", nil)
	require.Equal(t, true, bin["binary"])
	require.Equal(t, base64.StdEncoding.EncodeToString([]byte("x\x00y")), bin["data"])

	// An entry before any checkpoint (the first user message) is nearest
	// to no snapshot; a tool call's own answer is nearest to turn 1's.
	entries := items(t, e.ok(e.keyA, http.MethodGet, path+"/entries?pageSize=500", nil), "entries")
	e.fails(e.keyA, http.MethodGet, path+"/entries/"+entries[0]["id"].(string)+"/workspace", nil, http.StatusNotFound, "not_found")
	var answer2 string // turn 2's answer, under turn 1's last result: no checkpoint of its own
	for _, en := range entries {
		if en["role"] == "assistant" && en["parentId"] == turn1 {
			answer2 = en["id"].(string)
		}
	}
	require.NotEmpty(t, answer2)
	at := e.ok(e.keyA, http.MethodGet, path+"/entries/"+answer2+"/workspace", nil)
	require.Equal(t, turn1, at["snapshot"].(map[string]any)["snapshotEntryId"], "the nearest ancestor's snapshot")
}

// TestWorkspaceBadInput: an unknown or malformed entry, an entry of
// another organization's execution and another organization's key are
// 404s; a missing against or path, or a cursor not of the list, 400s.
func TestWorkspaceBadInput(t *testing.T) {
	e := workspaceEnv(t)
	path, results := e.runTo(e.keyA, e.orgA.Slug, "write files")
	turn1 := results[2]["id"].(string)
	_, other := e.runTo(e.keyB, e.orgB.Slug, "write files")
	theirs := other[2]["id"].(string)

	for _, p := range []string{
		path + "/entries/00000000-0000-0000-0000-000000000000/workspace",
		path + "/entries/not-an-id/workspace",
		path + "/entries/" + theirs + "/workspace",
		path + "/entries/" + theirs + "/workspace-diff?against=" + turn1,
		path + "/entries/" + turn1 + "/workspace-diff?against=" + theirs,
		path + "/entries/" + theirs + "/workspace/file?path=a.txt",
		path + "/entries/" + turn1 + "/workspace/file?path=nope.txt",
	} {
		e.fails(e.keyA, http.MethodGet, p, nil, http.StatusNotFound, "not_found")
	}
	e.fails(e.keyB, http.MethodGet, path+"/entries/"+turn1+"/workspace", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace-diff", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace/file", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace?cursor=junk", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, path+"/entries/"+turn1+"/workspace?pageSize=-1", nil, http.StatusBadRequest, "invalid_argument")
}
