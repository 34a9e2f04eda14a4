package main

import (
	"strings"
	"unicode/utf8"
)

// clean is s as a terminal may show it: text from the server (a model's
// answer, a tool's output, a tool's name or description from an MCP
// server) could otherwise drive the viewer's terminal — OSC 52 writes
// the clipboard, CSI sequences move the cursor and erase lines, so an
// answer could rewrite what a y/n approval prompt shows. Escape sequences
// (CSI, OSC, DCS and the like, in their 7-bit and C1 forms) are removed
// whole, and every other C0 and C1 control character but newline and tab
// is dropped, as is DEL. A sequence split across two writes (streamed
// tokens) loses its ESC in the first, so what follows is plain text.
func clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b && i+1 < len(s):
			i += skipEscape(s, i+1, s[i+1])
			continue
		case r >= 0x80 && r <= 0x9f:
			// The C1 forms of CSI, OSC, DCS, SOS, PM and APC open a
			// sequence as ESC and their 7-bit letter do.
			if intro := byte(r - 0x40); strings.IndexByte("[]PX^_", intro) >= 0 {
				i += size + sequenceBody(s[i+size:], intro)
				continue
			}
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError && size == 1:
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsCleaning reports whether s holds any byte clean would change.
func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		// C1 characters are U+0080 to U+009F: 0xc2 then 0x80 to 0x9f.
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0xc2 {
			return true
		}
	}
	return !utf8.ValidString(s)
}

// skipEscape is how many bytes from ESC (at start-1) its sequence takes:
// a CSI, OSC or string sequence to its end, else ESC and one character.
func skipEscape(s string, start int, intro byte) int {
	if strings.IndexByte("[]PX^_", intro) >= 0 {
		return 2 + sequenceBody(s[start+1:], intro)
	}
	return 2
}

// sequenceBody is the length of the sequence after its introducer: for
// CSI, parameters and intermediates up to a final byte; for OSC and the
// string sequences, up to BEL or ST (ESC \ or C1 ST). An unterminated
// one takes the rest of s.
func sequenceBody(s string, intro byte) int {
	if intro == '[' {
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c >= 0x40 && c <= 0x7e: // the final byte
				return i + 1
			case c < 0x20 || c > 0x7e:
				// Not a CSI byte: the sequence ends here, and the byte
				// is judged on its own.
				return i
			}
		}
		return len(s)
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
	}
	return len(s)
}
