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
//
// A scenario fills a report once per repetition; merge folds the
// repetitions together, so each table cell and figure holds every
// repetition's value: a figure prints as the median, a cell as the median
// with the lowest and highest in brackets, and a target is judged on the
// medians.
type report struct {
	tables  []*table
	targets []target
	figures []figure
}

type table struct {
	title  string
	header []string
	rows   [][]cell
}

// cell is one table cell: one value per repetition.
type cell []value

type figure struct {
	name string
	vals []value
}

// target is one of the issues' targets: judge reads the (median) figures
// and says whether it is met and by what. needs are the figures it reads:
// without one of them (its scenario not run) it is not judged.
type target struct {
	what  string
	needs []string
	judge func(f figures) (met bool, measured string)
}

func (r *report) table(title string, header ...string) *table {
	t := &table{title: title, header: header}
	r.tables = append(r.tables, t)
	return t
}

// row adds a row; each cell is a value, a time.Duration (ms), a float64,
// an int, or a string. The first cell names the row across repetitions.
func (t *table) row(cells ...any) {
	row := make([]cell, len(cells))
	for i, c := range cells {
		row[i] = cell{valueOf(c)}
	}
	t.rows = append(t.rows, row)
}

// add records a figure and returns its value as printed.
func (r *report) add(name string, v any) string {
	val := valueOf(v)
	r.figures = append(r.figures, figure{name, []value{val}})
	return val.figure()
}

// target records a target, judged on the figures once every repetition
// has run. judge must read only its figures, not the repetition's data.
func (r *report) target(what string, judge func(f figures) (bool, string)) {
	r.targets = append(r.targets, target{what: what, judge: judge})
}

// merge folds repetitions into one report: tables by title, rows by
// their first cell, figures by name, targets by what they say.
func merge(reps []*report) *report {
	out := &report{}
	for _, rep := range reps {
		for _, t := range rep.tables {
			i := slices.IndexFunc(out.tables, func(o *table) bool { return o.title == t.title })
			if i < 0 {
				out.tables = append(out.tables, &table{title: t.title, header: t.header})
				i = len(out.tables) - 1
			}
			acc := out.tables[i]
			for _, row := range t.rows {
				j := slices.IndexFunc(acc.rows, func(o []cell) bool { return o[0].text() == row[0].text() })
				if j < 0 {
					acc.rows = append(acc.rows, make([]cell, len(row)))
					j = len(acc.rows) - 1
				}
				for k, c := range row {
					if k < len(acc.rows[j]) {
						acc.rows[j][k] = append(acc.rows[j][k], c...)
					}
				}
			}
		}
		for _, f := range rep.figures {
			i := slices.IndexFunc(out.figures, func(o figure) bool { return o.name == f.name })
			if i < 0 {
				out.figures = append(out.figures, figure{name: f.name})
				i = len(out.figures) - 1
			}
			out.figures[i].vals = append(out.figures[i].vals, f.vals...)
		}
		for _, t := range rep.targets {
			if !slices.ContainsFunc(out.targets, func(o target) bool { return o.what == t.what }) {
				out.targets = append(out.targets, t)
			}
		}
	}
	return out
}

// figures are a report's figures by name, each its median.
type figures map[string]value

func (r *report) medians() figures {
	f := figures{}
	for _, fig := range r.figures {
		f[fig.name] = median(fig.vals)
	}
	return f
}

// num is a figure's number (0 when absent or text); text its printed form.
func (f figures) num(name string) float64 { return f[name].num }
func (f figures) text(name string) string { return f[name].figure() }

// ms is a millisecond figure as a table prints it.
func (f figures) ms(name string) string { return f[name].cell() }

// printTables prints the tables, each title followed by note.
func (r *report) printTables(w io.Writer, note string) {
	for _, t := range r.tables {
		fmt.Fprintf(w, "\n%s%s\n", t.title, note)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  "+strings.Join(t.header, "\t"))
		for _, row := range t.rows {
			s := make([]string, len(row))
			for i, c := range row {
				s[i] = c.String()
			}
			fmt.Fprintln(tw, "  "+strings.Join(s, "\t"))
		}
		_ = tw.Flush()
	}
}

// printTargets judges the targets on the median figures; title says
// whose they are.
func (r *report) printTargets(w io.Writer, title string) {
	if len(r.targets) == 0 {
		return
	}
	f := r.medians()
	fmt.Fprintf(w, "\ntargets, %s (medians)\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  target\tmeasured\t")
	for _, t := range r.targets {
		if i := slices.IndexFunc(t.needs, func(n string) bool { _, ok := f[n]; return !ok }); i >= 0 {
			fmt.Fprintf(tw, "  %s\t(no %s)\tnot run\n", t.what, t.needs[i])
			continue
		}
		met, measured := t.judge(f)
		verdict := "MISSED"
		if met {
			verdict = "met"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.what, measured, verdict)
	}
	_ = tw.Flush()
}

// printFigures prints one name=value line per figure, the median, with
// prefix before each name and suffix after it.
func (r *report) printFigures(w io.Writer, prefix, suffix string) {
	for _, f := range r.figures {
		fmt.Fprintf(w, "%s%s%s=%s\n", prefix, f.name, suffix, median(f.vals).figure())
	}
}

// headline are the figures issue 33 names without a set: set A's, each
// system's defaults.
var headline = []string{"ttft_added_p50_ms", "scale_n_ratio", "rss_ratio", "resume_small_ms",
	"long_agentree_calls", "long_agentree_max_run_history_bytes"}

// printHeadline prints the headline figures the report has, without a
// set's prefix.
func (r *report) printHeadline(w io.Writer, suffix string) {
	f := r.medians()
	for _, name := range headline {
		if v, ok := f[name]; ok {
			fmt.Fprintf(w, "%s%s=%s\n", name, suffix, v.figure())
		}
	}
}

// valueKind says how a value prints.
type valueKind int

const (
	kindText valueKind = iota
	kindMs
	kindFloat
	kindInt
	kindBytes
)

// value is one measurement: a number of some kind, or text.
type value struct {
	kind valueKind
	num  float64
	str  string
	// prec is a float's decimals when not 2, a millisecond figure's when
	// not 1.
	prec int
}

func valueOf(v any) value {
	switch v := v.(type) {
	case value:
		return v
	case time.Duration:
		return value{kind: kindMs, num: ms(v)}
	case float64:
		return value{kind: kindFloat, num: v}
	case int:
		return value{kind: kindInt, num: float64(v)}
	case int64:
		return value{kind: kindInt, num: float64(v)}
	case string:
		return value{str: v}
	default:
		return value{str: fmt.Sprint(v)}
	}
}

// bytesOf is a byte count: a figure prints it as is, a table as 1.2 MB.
func bytesOf(n int64) value { return value{kind: kindBytes, num: float64(n)} }

// floatOf is a number printed with prec decimals.
func floatOf(v float64, prec int) value { return value{kind: kindFloat, num: v, prec: prec} }

// msOf is milliseconds given as a number.
func msOf(v float64) value { return value{kind: kindMs, num: v} }

// fineMs is a duration in milliseconds to the microsecond: a step that
// never leaves the worker takes a few hundredths of one.
func fineMs(d time.Duration) value { return value{kind: kindMs, num: ms(d), prec: 3} }

// figure is the value as a name=value line prints it.
func (v value) figure() string {
	switch v.kind {
	case kindMs:
		if v.prec > 0 {
			return fmt.Sprintf("%.*f", v.prec, v.num)
		}
		return fmt.Sprintf("%.1f", v.num)
	case kindFloat:
		if v.prec > 0 {
			return fmt.Sprintf("%.*f", v.prec, v.num)
		}
		return fmt.Sprintf("%.2f", v.num)
	case kindInt, kindBytes:
		return fmt.Sprintf("%d", int64(math.Round(v.num)))
	}
	return v.str
}

// cell is the value as a table prints it, with its unit.
func (v value) cell() string {
	switch v.kind {
	case kindMs:
		return v.figure() + " ms"
	case kindBytes:
		return formatBytes(int64(v.num))
	}
	return v.figure()
}

// bare is the value without a millisecond unit, for a range.
func (v value) bare() string {
	if v.kind == kindMs {
		return v.figure()
	}
	return v.cell()
}

// median is the nearest-rank median of vals (the lower middle of an even
// count: always a value measured); text values are their distinct
// strings joined.
func median(vals []value) value {
	if len(vals) == 0 {
		return value{}
	}
	if vals[0].kind == kindText {
		var seen []string
		for _, v := range vals {
			if !slices.Contains(seen, v.str) {
				seen = append(seen, v.str)
			}
		}
		return value{str: strings.Join(seen, " / ")}
	}
	s := sorted(vals)
	return s[(len(s)-1)/2]
}

func sorted(vals []value) []value {
	s := slices.Clone(vals)
	slices.SortFunc(s, func(a, b value) int {
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
		return 0
	})
	return s
}

func (c cell) text() string {
	if len(c) == 0 {
		return ""
	}
	return c[0].cell()
}

// String is the cell's median and, when its repetitions differ, their
// range: "102.4 ms (99.8–110.1)".
func (c cell) String() string {
	if len(c) == 0 {
		return ""
	}
	m := median(c)
	if m.kind == kindText || len(c) == 1 {
		return m.cell()
	}
	s := sorted(c)
	lo, hi := s[0], s[len(s)-1]
	if lo.bare() == hi.bare() {
		return m.cell()
	}
	return fmt.Sprintf("%s (%s–%s)", m.cell(), lo.bare(), hi.bare())
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
