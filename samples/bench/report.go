package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// report is what the benchmark prints: a table per scenario and the
// targets, for people; then one name=value line per figure, for scripts.
type report struct {
	tables  []*table
	targets []*table
	figures []figure
}

type table struct {
	title string
	rows  [][]string
}

type figure struct{ name, value string }

func (r *report) table(title string, header ...string) *table {
	t := &table{title: title, rows: [][]string{header}}
	r.tables = append(r.tables, t)
	return t
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

// add records a figure and returns its value as printed.
func (r *report) add(name string, v any) string {
	var s string
	switch v := v.(type) {
	case float64:
		s = fmt.Sprintf("%.2f", v)
	case time.Duration:
		s = fmt.Sprintf("%.1f", ms(v))
	default:
		s = fmt.Sprint(v)
	}
	r.figures = append(r.figures, figure{name, s})
	return s
}

// target records whether a target was reached, and by what figure.
func (r *report) target(what string, met bool, measured string) {
	if len(r.targets) == 0 {
		r.targets = append(r.targets, &table{title: "targets", rows: [][]string{{"target", "measured", ""}}})
	}
	verdict := "MISSED"
	if met {
		verdict = "met"
	}
	r.targets[0].row(what, measured, verdict)
}

func (r *report) print(w io.Writer) {
	for _, t := range append(r.tables, r.targets...) {
		fmt.Fprintf(w, "\n%s\n", t.title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, row := range t.rows {
			fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w)
	for _, f := range r.figures {
		fmt.Fprintf(w, "%s=%s\n", f.name, f.value)
	}
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile is the nearest-rank q-quantile (0 < q <= 1) of ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// ratio is a/b, or 0 when b is 0.
func ratio[T int64 | time.Duration](a, b T) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func fmtMs(d time.Duration) string { return fmt.Sprintf("%.1f ms", ms(d)) }
