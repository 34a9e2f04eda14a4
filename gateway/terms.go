package gateway

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/agentree/agentree/agentsdk"
)

// The compression analysis (compression.go) asks whether a summary kept
// the facts of each entry it replaced. A fact is approximated by the
// entry's distinctive terms, found deterministically (no model call, so
// the same compaction always gets the same answer). A term is a word of
// the entry's text — split at spaces and punctuation other than
// "_ . / - : # @", with leading and trailing punctuation trimmed — that
// is one of:
//
//   - a number or code with a digit in it of at least two characters
//     (4711, ORD-4711, 3.14, v2);
//   - a path, URL or dotted name (src/auth.go, example.com, pkg.Func);
//   - an identifier: snake_case, camelCase or kebab-case with a letter on
//     each side (order_id, parseConfig, max-tokens);
//   - a proper-noun-like word: capitalised (or all capitals, at least two
//     letters), not starting a sentence, not in the stop list (Berlin,
//     Acme, AWS);
//   - a rare word: at least 10 letters, not in the stop list.
//
// Terms are case-folded for matching and kept in order of first
// appearance, at most maxTerms an entry. A summary keeps a term when it
// holds it case-insensitively, not inside a longer word or number.
const maxTerms = 20

// stopWords are common words that look distinctive by the rules above
// (sentence-like capitals, long everyday words) but say nothing of a fact.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by can could did do does for from had has have he her his
		how i if in into is it its me my no not of on or our she so than that the their them then there these they
		this those to too us was we were what when where which who why will with would you your yes ok okay please
		thanks thank hello hi done now here sure let lets i'm i'll i've it's that's don't can't
		additionally afterwards alternatively accordingly conversation information everything something anything
		nevertheless nonetheless furthermore consequently particularly approximately immediately unfortunately
		successfully specifically considering understanding implementation appropriate requirements
		configuration functionality necessarily recommended recommendation`) {
		stopWords[w] = true
	}
}

// entryText is what a compaction's summariser read of a message: its text,
// its tool calls' names and argument values, a tool result's text.
// Thinking is not sent to the summariser, so it holds no term.
func entryText(m agentsdk.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		switch c.Type {
		case agentsdk.BlockText:
			b.WriteString(c.Text)
			b.WriteString("\n")
		case agentsdk.BlockToolCall:
			if c.ToolCall != nil {
				b.WriteString(c.ToolCall.Name)
				b.WriteString("\n")
				writeValues(&b, c.ToolCall.Arguments)
			}
		}
	}
	return b.String()
}

// writeValues writes the string and number values of a JSON document,
// one a line: an argument's keys are the tool's schema, not a fact.
func writeValues(b *strings.Builder, raw json.RawMessage) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		b.Write(raw)
		b.WriteString("\n")
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			b.WriteString(x)
			b.WriteString("\n")
		case float64:
			j, _ := json.Marshal(x)
			b.Write(j)
			b.WriteString("\n")
		}
	}
	walk(v)
}

// distinctiveTerms are text's distinctive terms, in order of first
// appearance, case-folded duplicates dropped, at most maxTerms.
func distinctiveTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range words(text) {
		t := strings.Trim(w.text, ".:-/#@'")
		if t == "" || !distinctive(t, w.starts) {
			continue
		}
		if k := strings.ToLower(t); !seen[k] {
			seen[k] = true
			out = append(out, t)
			if len(out) == maxTerms {
				break
			}
		}
	}
	return out
}

// word is one word of a text, and whether it starts a sentence.
type word struct {
	text   string
	starts bool
}

// words splits text at spaces and punctuation but "_ . / - : # @ '". A
// sentence starts the text, each line, and follows a word ending in "."
// or ":" or a "!" or "?".
func words(text string) []word {
	var out []word
	starts := true
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := string(cur)
		out = append(out, word{text: w, starts: starts})
		starts = strings.HasSuffix(w, ".") || strings.HasSuffix(w, ":")
		cur = cur[:0]
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./-:#@'", r) {
			cur = append(cur, r)
			continue
		}
		flush()
		if r == '\n' || r == '!' || r == '?' {
			starts = true
		}
	}
	flush()
	return out
}

// distinctive applies the rules of the package comment to one word;
// startsSentence says whether it is the first word of a sentence.
func distinctive(w string, startsSentence bool) bool {
	var letters, digits, upper int
	camel := false
	prevLower := false
	for _, r := range w {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
				camel = camel || prevLower
			}
		}
		prevLower = unicode.IsLower(r)
	}
	lower := strings.ToLower(w)
	switch {
	case stopWords[lower]:
		return false
	case digits > 0:
		return len(w) >= 2
	case letters == 0:
		return false
	case strings.ContainsAny(w, "/.@:#"):
		return true
	case strings.ContainsAny(w, "_-") || camel:
		return true
	case upper == letters && letters >= 2:
		return true
	case upper > 0 && !startsSentence && letters >= 3:
		return true
	}
	return letters >= 10
}

// holdsTerm reports whether text (case-folded) holds term (case-folded)
// as a whole word: not inside a longer word or number.
func holdsTerm(text, term string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], term)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(term)
		if (i == 0 || !wordByte(text[i-1])) && (end == len(text) || !wordByte(text[end])) {
			return true
		}
		from = i + 1
	}
}

// wordByte: a letter or digit (ASCII; a multi-byte rune's bytes count as
// one, so a term next to one is not matched).
func wordByte(b byte) bool {
	return b >= 0x80 || b == '_' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}
