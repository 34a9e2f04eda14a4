package gateway

import (
	"fmt"
	"strings"
)

// unifiedDiff is the unified diff (3 lines of context, as diff -u) that
// turns text a into text b, under the headers aName and bName, and
// whether it was computed: past maxEdits line edits (files that differ
// throughout) it is not, since Myers' algorithm then costs time and
// memory that grow with the square of the edits.
func unifiedDiff(aName, bName, a, b string) (string, bool) {
	al, bl := splitLines(a), splitLines(b)
	edits, ok := myers(al, bl)
	if !ok {
		return "", false
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aName, bName)
	const context = 3
	for start := 0; start < len(edits); {
		// The next change, and the hunk around it: changes closer than
		// twice the context share one.
		first := start
		for first < len(edits) && edits[first].op == ' ' {
			first++
		}
		if first == len(edits) {
			break
		}
		lo := max(first-context, start)
		hi := first
		for i := first; i < len(edits); i++ {
			if edits[i].op != ' ' {
				hi = i
				continue
			}
			if i-hi > 2*context {
				break
			}
		}
		hi = min(hi+context, len(edits)-1)
		writeHunk(&sb, edits[lo:hi+1])
		start = hi + 1
	}
	return sb.String(), true
}

// edit is one line of an edit script: ' ' kept, '-' removed, '+' added,
// with its line numbers (1-based) on each side.
type edit struct {
	op         byte
	line       string
	aNum, bNum int
}

func writeHunk(sb *strings.Builder, es []edit) {
	aStart, bStart, aLen, bLen := 0, 0, 0, 0
	for _, e := range es {
		if e.op != '+' {
			if aLen == 0 {
				aStart = e.aNum
			}
			aLen++
		}
		if e.op != '-' {
			if bLen == 0 {
				bStart = e.bNum
			}
			bLen++
		}
	}
	// An empty side names the line before the hunk, as diff -u does.
	if aLen == 0 {
		aStart = es[0].aNum - 1
	}
	if bLen == 0 {
		bStart = es[0].bNum - 1
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, e := range es {
		sb.WriteByte(e.op)
		sb.WriteString(e.line)
		if !strings.HasSuffix(e.line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// splitLines splits s into lines that keep their "\n", so a last line
// without one differs from the same line with one.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// maxEdits bounds the edit distance myers searches to.
const maxEdits = 2000

// myers is the shortest edit script from a to b (Myers, "An O(ND)
// difference algorithm", 1986), or false past maxEdits. It keeps, for each
// distance d, the furthest reaching x of every diagonal k in [-d, d], and
// walks those back from the end.
func myers(a, b []string) ([]edit, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return nil, false
	}
	// Walk back: trace[d] is v before step d, over diagonals [-d-1, d+1].
	var rev []edit
	x, y := n, m
	for d := found; d > 0; d-- {
		at := func(k int) int { return trace[d][k+d+1] }
		k := x - y
		prev := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prev = k + 1
		}
		px := at(prev)
		py := px - prev
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, edit{op: ' ', line: a[x], aNum: x + 1, bNum: y + 1})
		}
		if x == px {
			y--
			rev = append(rev, edit{op: '+', line: b[y], aNum: x + 1, bNum: y + 1})
		} else {
			x--
			rev = append(rev, edit{op: '-', line: a[x], aNum: x + 1, bNum: y + 1})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, edit{op: ' ', line: a[x], aNum: x + 1, bNum: y + 1})
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out, true
}
