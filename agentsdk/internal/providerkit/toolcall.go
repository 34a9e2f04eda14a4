package providerkit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// OwnIDLen is agentsdk's bound on a tool-call ID (agentsdk.ToolCall.ID):
// the length an answer's IDs are normalised to.
const OwnIDLen = 64

// hashLen is how much of the original ID's hash a changed ID carries.
const hashLen = 12

// ToolCallID maps any provider's tool-call ID to one of at most limit bytes
// of [A-Za-z0-9_-], which every provider's API accepts. It is
// deterministic, so a tool call and its result map alike however often a
// conversation is converted; an ID that is already fine is kept, and one
// that is changed gets a hash of the original so distinct IDs stay
// distinct. "" stays "" for the runtime to fill in. limit must exceed 13.
func ToolCallID(id string, limit int) string {
	if id == "" || len(id) <= limit && strings.IndexFunc(id, badIDRune) < 0 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	clean := strings.Map(func(r rune) rune {
		if badIDRune(r) {
			return '_'
		}
		return r
	}, id)
	clean = clean[:min(len(clean), limit-hashLen-1)]
	return clean + "_" + hex.EncodeToString(sum[:])[:hashLen]
}

func badIDRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
}

// Arguments makes a tool call's streamed arguments a JSON value: none
// become {}, and arguments cut short (at the token limit) are kept as a
// JSON string, so the tool's schema check tells the model what went wrong
// instead of the message failing to encode.
func Arguments(raw string) json.RawMessage {
	if strings.TrimSpace(raw) == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(raw)) {
		return json.RawMessage(raw)
	}
	b, _ := json.Marshal(raw)
	return b
}
