package ui

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"

	"golang.org/x/time/rate"
)

//go:embed static
var static embed.FS

// ReportPath is where browsers send the page's Content-Security-Policy
// violation reports (POST, no API key: a browser sends none).
const ReportPath = "/ui/csp-report"

// policy is the page's Content-Security-Policy. The page may load only its
// own assets and call only its own origin: no CDN, no other host, no
// inline script or style, no plugin, no <base> that would move its
// relative URLs, no frame of it elsewhere. Images come from the same
// origin only, so an answer's Markdown cannot make the browser fetch (and
// so tell) another host. A violation is reported to ReportPath with
// report-uri, which Chromium posts at once; report-to would batch reports
// for up to a minute.
const policy = "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-src 'none'; frame-ancestors 'none'; report-uri " + ReportPath

// Handler serves the UI: the page at /, its assets under /ui/ and, for a
// POST to ReportPath, the violation reports, which it logs to log.
func Handler(log *slog.Logger) http.Handler {
	assets, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	files := http.StripPrefix("/ui/", http.FileServerFS(assets))
	page, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		panic(err)
	}
	reports := reportHandler(log, rate.NewLimiter(reportRate, reportBurst))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == ReportPath {
			reports.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == "/" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
			return
		}
		files.ServeHTTP(w, r)
	})
}
