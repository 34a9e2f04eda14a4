package childworkflow

import "strings"

// Severity is how urgent a ticket is.
type Severity string

// The severities; SeverityUnknown is an answer the workflow could not read.
const (
	SeverityHigh    Severity = "high"
	SeverityNormal  Severity = "normal"
	SeverityLow     Severity = "low"
	SeverityUnknown Severity = "unknown"
)

// Verdict is the triage agent's answer.
type Verdict struct {
	Severity Severity
	Summary  string
}

// ParseVerdict reads the agent's "severity: …" and "summary: …" lines. A
// model may not follow the format: what cannot be read is
// SeverityUnknown, which the workflow hands to people rather than guess.
func ParseVerdict(text string) Verdict {
	v := Verdict{Severity: SeverityUnknown}
	for _, line := range strings.Split(text, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "severity":
			switch s := Severity(strings.ToLower(value)); s {
			case SeverityHigh, SeverityNormal, SeverityLow:
				v.Severity = s
			}
		case "summary":
			v.Summary = value
		}
	}
	if v.Summary == "" {
		v.Summary = strings.TrimSpace(text)
	}
	return v
}
