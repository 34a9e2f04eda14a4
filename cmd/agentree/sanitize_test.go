package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
)

func TestCleanRemovesTerminalControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nline":                        "plain\ttext\nline",
		"héllo wörld ✓":                            "héllo wörld ✓",
		"copy \x1b]52;c;ZXZpbA==\x07me":            "copy me",
		"copy \x1b]52;c;ZXZpbA==\x1b\\me":          "copy me",
		"\x1b[31mred\x1b[0m \x1b[2K\rover":         "red over",
		"\x1b[?1049h alt":                          " alt",
		"c1 \u009b31mcsi\u009d52;c;eA==\u009cdone": "c1 csidone",
		"bell\a back\b nul\x00 del\x7f":            "bell back nul del",
		"\x1bPdcs\x1b\\ \x1b_apc\x07 \x1bc reset":  "   reset",
		"cut \x1b]52;c;ZXZpbA==":                   "cut ",
		"bad \xff utf8":                            "bad  utf8",
		"trailing \x1b":                            "trailing ",
	} {
		require.Equal(t, want, clean(in), "%q", in)
	}
}

// TestCLIStripsControlCharacters: a model that answers with OSC 52 (write
// the viewer's clipboard), CSI sequences (clear the screen, colour) and
// their C1 forms, streamed across tokens and in its thinking, reaches
// `agentree run`'s and `agentree show`'s stdout as plain text. Real
// Postgres and Temporal, `agentree dev` with a fake Anthropic server.
func TestCLIStripsControlCharacters(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 5}
	answer := providertest.NewAnthropicStream(model, usage).
		Thinking("sig", "think \x1b]52;c;", "ZXZpbA==\x07quietly").
		Text("Copy \x1b]52;c;ZXZpbA==\x07this\x1b[2J", " \x1b[31mred\x1b[0m \x1b]52;c;", "c3BsaXQ=\x07 \u009b31mc1\u009d52;c;eA==\u009c done\r\n").
		End("end_turn", 3)
	fake := providertest.NewServer(t, providertest.Reply{Body: answer})
	d := startConfiguredDev(t, anthropicEndpoint(t, fake.URL, "["+model+"]")+"toolSets: []\n")
	common := []string{"--addr", strings.TrimSuffix(d.base, "/api/orgs/dev"), "--org", "dev", "--key", d.key}
	c := func(args ...string) (string, string, error) {
		return cli(context.Background(), append(args, common...)...)
	}
	out, errOut, err := c("run", "--model", "anthropic/"+model, "say it")
	require.NoError(t, err, out+errOut)
	id := uuidRE.FindString(errOut + out)
	require.NotEmpty(t, id, out+errOut)
	shown, _, err := c("show", id)
	require.NoError(t, err)
	for name, s := range map[string]string{"run": out, "show": shown} {
		require.Contains(t, s, "Copy this red", name)
		require.Contains(t, s, "done", name)
		require.NotRegexp(t, "[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]", s, "%s printed a control character: %q", name, s)
	}
}
