package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMergeTakesMedians: repetitions fold into one report whose figures
// are medians, whose cells show the range, and whose targets are judged
// on the medians.
func TestMergeTakesMedians(t *testing.T) {
	var reps []*report
	for i, d := range []time.Duration{110 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond} {
		r := &report{}
		tb := r.table("t", "", "time", "status", "size")
		tb.row("a", d, "COMPLETED", bytesOf(2048))
		r.add("x_ms", d)
		r.add("x_status", []string{"COMPLETED", "COMPLETED", "FAILED"}[i])
		r.target("x under 150 ms", func(f figures) (bool, string) { return f.num("x_ms") <= 150, f.ms("x_ms") })
		reps = append(reps, r)
	}
	m := merge(reps)
	require.Len(t, m.tables, 1)
	require.Len(t, m.tables[0].rows, 1)
	require.Len(t, m.targets, 1)
	f := m.medians()
	require.Equal(t, "110.0", f.text("x_ms"))
	require.Equal(t, "COMPLETED / FAILED", f.text("x_status"))

	var out bytes.Buffer
	m.printTables(&out, "")
	require.Contains(t, out.String(), "110.0 ms (100.0–300.0)")
	require.Contains(t, out.String(), "2.0 KB")
	require.NotContains(t, out.String(), "2.0 KB (")
	out.Reset()
	m.printTargets(&out, "set A")
	require.Contains(t, out.String(), "110.0 ms")
	require.True(t, strings.HasSuffix(strings.TrimSpace(out.String()), "met"), out.String())
	out.Reset()
	m.printFigures(&out, "setA_", "_default")
	require.Equal(t, "setA_x_ms_default=110.0\nsetA_x_status_default=COMPLETED / FAILED\n", out.String())
}

func TestMedianOfEvenCountIsAMeasuredValue(t *testing.T) {
	require.Equal(t, 1.0, median([]value{valueOf(3.0), valueOf(1.0)}).num)
	require.Equal(t, 2.0, median([]value{valueOf(4.0), valueOf(1.0), valueOf(2.0), valueOf(3.0)}).num)
}
