package ui

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"unicode/utf8"

	"golang.org/x/time/rate"
)

// ViolationMessage is the log message of a Content-Security-Policy
// violation a browser reported: an operator (and the UI's tests) look for
// it, since on this page a violation means something tried to load or run
// what the page never does — an injection caught by the policy, or a bug.
const ViolationMessage = "ui: content security policy violation"

// Reports are logged at most reportRate a second (reportBurst at once):
// the endpoint takes no API key, so anyone can post to it, and a flood of
// junk must not flood the log.
const (
	reportRate  = 2
	reportBurst = 50
	// maxReport bounds a report's body; real ones are a few hundred bytes.
	maxReport = 16 << 10
	// maxField bounds each field logged.
	maxField = 300
)

// violation is what is logged of a report: the fields of the legacy
// report-uri format ({"csp-report": {...}}, kebab-case) and of the
// Reporting API's ([{"type": "csp-violation", "body": {...}}],
// camelCase), whichever the browser sent.
type violation struct {
	DocumentURI        string `json:"document-uri"`
	ViolatedDirective  string `json:"violated-directive"`
	EffectiveDirective string `json:"effective-directive"`
	BlockedURI         string `json:"blocked-uri"`
	SourceFile         string `json:"source-file"`
	LineNumber         int    `json:"line-number"`
	Sample             string `json:"script-sample"`

	DocumentURL     string `json:"documentURL"`
	EffectiveDir    string `json:"effectiveDirective"`
	BlockedURL      string `json:"blockedURL"`
	SourceFileCamel string `json:"sourceFile"`
	LineNumberCamel int    `json:"lineNumber"`
	SampleCamel     string `json:"sample"`
}

// attrs are the violation's log attributes, in one shape whatever the
// format, each cut to maxField.
func (v violation) attrs() []any {
	pick := func(a, b string) string {
		if a == "" {
			a = b
		}
		if len(a) > maxField {
			a = a[:maxField]
			for !utf8.ValidString(a) {
				a = a[:len(a)-1]
			}
		}
		return a
	}
	return []any{
		"directive", pick(pick(v.EffectiveDirective, v.EffectiveDir), v.ViolatedDirective),
		"blocked", pick(v.BlockedURI, v.BlockedURL),
		"document", pick(v.DocumentURI, v.DocumentURL),
		"source", pick(v.SourceFile, v.SourceFileCamel),
		"line", max(v.LineNumber, v.LineNumberCamel),
		"sample", pick(v.Sample, v.SampleCamel),
	}
}

// reportHandler logs each violation a POSTed report holds and answers 204;
// a body that is no report is a 400, a request of another method a 405.
func reportHandler(log *slog.Logger, limit *rate.Limiter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "send violation reports with POST")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxReport+1))
		if err != nil || len(body) > maxReport {
			writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", "a violation report is at most 16 KiB")
			return
		}
		vs, ok := parseReport(body)
		if !ok {
			writeError(w, http.StatusBadRequest, "invalid_argument", "the body is not a Content-Security-Policy violation report")
			return
		}
		for _, v := range vs {
			if limit.Allow() {
				log.Warn(ViolationMessage, v.attrs()...)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// parseReport reads either report format.
func parseReport(body []byte) ([]violation, bool) {
	var legacy struct {
		Report *violation `json:"csp-report"`
	}
	if json.Unmarshal(body, &legacy) == nil && legacy.Report != nil {
		return []violation{*legacy.Report}, true
	}
	var batch []struct {
		Type string    `json:"type"`
		Body violation `json:"body"`
	}
	if json.Unmarshal(body, &batch) != nil || len(batch) == 0 {
		return nil, false
	}
	var out []violation
	for _, b := range batch {
		if b.Type == "csp-violation" {
			out = append(out, b.Body)
		}
	}
	return out, len(out) > 0
}

// writeError answers in the API's error shape, {code, message}.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": message})
}
