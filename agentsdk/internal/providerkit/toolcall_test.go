package providerkit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

var wireID = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

func TestToolCallIDKeepsIDsThatAreAlreadyFine(t *testing.T) {
	for _, id := range []string{"", "call_b", "toolu_01A09q90qw90lq917835lq9", "a-B_9", strings.Repeat("x", 40)} {
		require.Equal(t, id, providerkit.ToolCallID(id, 40), id)
	}
}

func TestToolCallIDCleansAndHashesTheRest(t *testing.T) {
	sum := sha256.Sum256([]byte("call.a:1"))
	require.Equal(t, "call_a_1_"+hex.EncodeToString(sum[:])[:12], providerkit.ToolCallID("call.a:1", providerkit.OwnIDLen))

	long := strings.Repeat("y", 41)
	got := providerkit.ToolCallID(long, 40)
	require.Len(t, got, 40)
	require.True(t, strings.HasPrefix(got, strings.Repeat("y", 27)+"_"), got)

	// Two IDs that clean alike stay distinct.
	require.NotEqual(t, providerkit.ToolCallID("a.b", 40), providerkit.ToolCallID("a:b", 40))
}

func TestToolCallIDIsBoundedDeterministicAndWireSafe(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcXYZ019_-.:/ é漢🙂")
	for i := range 2000 {
		runes := make([]rune, rng.IntN(120))
		for j := range runes {
			runes[j] = alphabet[rng.IntN(len(alphabet))]
		}
		id, limit := string(runes), 14+rng.IntN(60)
		got := providerkit.ToolCallID(id, limit)
		msg := fmt.Sprintf("case %d: id %q limit %d", i, id, limit)
		require.LessOrEqual(t, len(got), limit, msg)
		require.Regexp(t, wireID, got, msg)
		require.Equal(t, got, providerkit.ToolCallID(id, limit), msg)
		require.Equal(t, id == "", got == "", msg)
	}
}

func TestArgumentsRepairsStreamedInput(t *testing.T) {
	for raw, want := range map[string]string{
		"":                   `{}`,
		" \n ":               `{}`,
		`{"path":"a"}`:       `{"path":"a"}`,
		`[1,2]`:              `[1,2]`,
		`{"path":"a`:         `"{\"path\":\"a"`,
		`{"cut": "é`:         `"{\"cut\": \"é"`,
		`{"a":1}{"b":2}`:     `"{\"a\":1}{\"b\":2}"`,
		` {"spaced": true} `: ` {"spaced": true} `,
	} {
		got := providerkit.Arguments(raw)
		require.True(t, json.Valid(got), "%q gave invalid JSON %s", raw, got)
		require.Equal(t, want, string(got), raw)
	}
}
