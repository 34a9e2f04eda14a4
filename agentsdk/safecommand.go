package agentsdk

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Safe commands: the operator's list of bash commands that run without a
// person's approval when bash's policy is ask (seed 003 §3.1: "whitelist
// known-safe commands").
//
// A pattern is a list of words: a command matches when it is ONE simple
// command (no ; & | < > $ ` ( ) { } \ # ! * ? [ ] ~, no newline, no
// leading VAR=value) whose words, quotes removed, match the pattern's
// words one by one. In a pattern word, * matches any run of characters
// (/ included) and ? any one; a last word that is * alone matches any
// further words, none included ("ls *" matches "ls" and "ls -la src").
//
// The command is matched as bash will read it, so what matched is what
// runs: anything that could make bash run a second command, expand a
// value, redirect, or glob refuses the match, and the call waits for a
// person as before. Single quotes keep their content literal, so
// `cat 'a;b'` is one argument; double quotes are accepted only around
// text with no $, ` or \.

// ToolBash is the name of the built-in shell tool the safe list applies
// to: its arguments hold the script as "command".
const ToolBash = "bash"

// SafeCommand reports whether the bash script command matches one of
// patterns.
func SafeCommand(patterns []string, command string) bool {
	argv, ok := simpleCommand(command)
	if !ok || len(argv) == 0 || strings.Contains(argv[0], "=") {
		return false
	}
	for _, p := range patterns {
		if matchWords(strings.Fields(p), argv) {
			return true
		}
	}
	return false
}

// SafeCall reports whether call is a bash call whose command is one of
// the operator's safe commands.
func (o Operator) SafeCall(call ToolCall) bool {
	if call.Name != ToolBash || len(o.SafeCommands) == 0 {
		return false
	}
	var args struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(call.Arguments, &args) != nil {
		return false
	}
	return SafeCommand(o.SafeCommands, args.Command)
}

// SafeCommandProblems lists what is wrong with patterns, naming the field
// as field: a pattern must have words, and only plain characters a safe
// command may hold, * and ?.
func SafeCommandProblems(field string, patterns []string) []string {
	var problems []string
	for i, p := range patterns {
		words := strings.Fields(p)
		if len(words) == 0 {
			problems = append(problems, fmt.Sprintf("%s[%d] is empty", field, i))
			continue
		}
		for _, w := range words {
			for _, r := range w {
				if !plainRune(r) && r != '*' && r != '?' {
					problems = append(problems, fmt.Sprintf("%s[%d] %q: %q cannot appear in a safe command", field, i, p, r))
					break
				}
			}
		}
		if strings.ContainsAny(words[0], "*?") {
			problems = append(problems, fmt.Sprintf("%s[%d] %q: the command's name must be written out, not a pattern", field, i, p))
		}
	}
	return problems
}

// plainRune reports whether r may stand unquoted in a safe command: it
// means nothing to bash.
func plainRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-_./=:,+@%", r)
}

// simpleCommand splits a script into the words of one simple command,
// quotes removed, or reports that it is not one.
func simpleCommand(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+end])
			i, inWord = i+1+end, true
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, false
			}
			quoted := s[i+1 : i+1+end]
			if strings.ContainsAny(quoted, "$`\\!") {
				return nil, false
			}
			cur.WriteString(quoted)
			i, inWord = i+1+end, true
		case c < 0x80 && plainRune(rune(c)):
			cur.WriteByte(c)
			inWord = true
		default:
			// Every operator, expansion, glob, escape, newline, and any
			// byte outside ASCII.
			return nil, false
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// matchWords matches argv against a pattern's words.
func matchWords(pattern, argv []string) bool {
	for i, p := range pattern {
		if p == "*" && i == len(pattern)-1 {
			return true
		}
		if i >= len(argv) || !matchGlob(p, argv[i]) {
			return false
		}
	}
	return len(argv) == len(pattern)
}

// matchGlob matches s against p, where * is any run of bytes and ? any
// one.
func matchGlob(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if matchGlob(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			p, s = p[1:], s[1:]
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return len(s) == 0
}

// CoversCall reports whether a standing approval's argument pattern
// covers call: an empty pattern covers every call of its tool; a pattern
// is a safe-command pattern, for bash calls only.
func CoversCall(pattern string, call ToolCall) bool {
	if pattern == "" {
		return true
	}
	return Operator{SafeCommands: []string{pattern}}.SafeCall(call)
}
