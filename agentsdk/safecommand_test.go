package agentsdk_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

var safeList = []string{"ls *", "git status", "cat *", "git log --oneline *", "wc -l *.go"}

// Only a single simple command whose words match a pattern is safe.
func TestSafeCommandMatchesSimpleCommands(t *testing.T) {
	for _, cmd := range []string{
		"ls", "ls -la", "ls  -la   src/", "git status", "cat README.md", "cat 'a file; with $(stuff)'",
		`cat "notes.txt"`, "git log --oneline -5", "wc -l main.go", "wc -l dir/sub/x.go", "\tls\t-l ",
	} {
		require.True(t, agentsdk.SafeCommand(safeList, cmd), "%q is safe", cmd)
	}
}

// Hostile inputs: anything bash would read as more than one simple
// command with literal words never matches, whatever the patterns.
func TestSafeCommandRefusesHostileInputs(t *testing.T) {
	for _, cmd := range []string{
		"ls; rm -rf /", "ls;rm -rf /", "ls && rm -rf /", "ls || rm -rf /", "ls & rm -rf /", "ls | sh",
		"ls |& sh", "ls $(rm -rf /)", "ls `rm -rf /`", "ls > /etc/passwd", "ls >> x", "ls < /etc/shadow",
		"ls 2>&1", "ls\nrm -rf /", "ls\rrm -rf /", "ls $HOME", "ls ${HOME}", `ls "$(rm -rf /)"`,
		"ls \"`rm`\"", `ls \; rm`, "ls *", "ls ?", "ls [a-z]*", "ls ~", "ls ~root", "ls {a,b}",
		"(ls)", "{ ls; }", "ls # comment", "!ls", "PATH=/tmp/evil ls", "LD_PRELOAD=x.so cat y", "ls 'unterminated",
		`ls "unterminated`, "ls <(rm -rf /)", "ls $'\\x41'", "ls \u00a0-la", "ls\u2028rm", "git status; rm -rf /",
		"git status --short", "git  status -s", "gitstatus", "git", "catx", "", "   ", "rm -rf /", "sudo ls",
		"eval ls", "/bin/ls; id", "wc -l main.c", "ls\x00; rm",
	} {
		require.False(t, agentsdk.SafeCommand(safeList, cmd), "%q must not be safe", cmd)
	}
	require.False(t, agentsdk.SafeCommand(nil, "ls"), "no list, nothing safe")
}

func TestOperatorSafeCallIsBashOnly(t *testing.T) {
	op := agentsdk.Operator{SafeCommands: []string{"ls *"}}
	args := func(cmd string) json.RawMessage { b, _ := json.Marshal(map[string]string{"command": cmd}); return b }
	require.True(t, op.SafeCall(agentsdk.ToolCall{Name: "bash", Arguments: args("ls -la")}))
	require.False(t, op.SafeCall(agentsdk.ToolCall{Name: "bash", Arguments: args("ls; id")}))
	require.False(t, op.SafeCall(agentsdk.ToolCall{Name: "other", Arguments: args("ls")}), "only bash")
	require.False(t, op.SafeCall(agentsdk.ToolCall{Name: "bash", Arguments: json.RawMessage(`{"command": 1}`)}))
	require.False(t, agentsdk.Operator{}.SafeCall(agentsdk.ToolCall{Name: "bash", Arguments: args("ls")}))
}

func TestSafeCommandProblems(t *testing.T) {
	require.Empty(t, agentsdk.SafeCommandProblems("safeCommands", safeList))
	got := agentsdk.SafeCommandProblems("safeCommands", []string{"", "ls; rm", "* -la", "cat $X"})
	require.Len(t, got, 4, "%v", got)
	require.Contains(t, got[0], "safeCommands[0] is empty")
	require.Contains(t, got[1], "';'")
	require.Contains(t, got[2], "written out")
	require.Contains(t, got[3], "'$'")
}
