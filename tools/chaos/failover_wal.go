package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// walTail is what a dead primary wrote past an LSN.
type walTail struct {
	end         string    // the end of its valid WAL
	commits     int       // commit records after the LSN
	firstCommit time.Time // the first of them (zero with none)
}

var (
	// A pg_waldump record line: "rmgr: Transaction ... lsn: 0/0301C2D8,
	// prev ..., desc: COMMIT 2026-11-27 18:59:01.123456 UTC; ...".
	walRecord = regexp.MustCompile(`lsn: ([0-9A-F]+/[0-9A-F]+),.*desc: (\S+)(?: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+))?`)
	// The end of valid WAL: "invalid record length at 0/3020038".
	walEnd = regexp.MustCompile(`at ([0-9A-F]+/[0-9A-F]+): `)
)

// walAfter reads the stopped primary's WAL in dir from lsn to its end
// with pg_waldump. pg_waldump exits non-zero at the end of valid WAL,
// which is where every crashed server's WAL ends: its output, not its
// status, is read.
func walAfter(ctx context.Context, dir, lsn string) (walTail, error) {
	tool, err := pgTool("pg_waldump")
	if err != nil {
		return walTail{}, err
	}
	out, _ := asPostgres(ctx, tool, "-p", filepath.Join(dir, "pg_wal"), "-s", lsn).CombinedOutput()
	return parseWAL(string(out), lsn)
}

// parseWAL reads pg_waldump's output from start.
func parseWAL(out, start string) (walTail, error) {
	t := walTail{end: start}
	ended := false
	for _, line := range strings.Split(out, "\n") {
		if m := walRecord.FindStringSubmatch(line); m != nil {
			if m[2] == "COMMIT" {
				t.commits++
				if t.firstCommit.IsZero() && m[3] != "" {
					at, err := time.Parse("2006-01-02 15:04:05.999999 MST", m[3])
					if err != nil {
						return t, fmt.Errorf("chaos: failover: pg_waldump commit time %q: %w", m[3], err)
					}
					t.firstCommit = at
				}
			}
			continue
		}
		switch {
		case strings.Contains(line, "error in WAL record at"):
			ended = true
			if m := walEnd.FindAllStringSubmatch(line, -1); m != nil {
				t.end = m[len(m)-1][1]
			}
		case strings.Contains(line, "could not find a valid record after"):
			ended = true
		}
	}
	// Anything else (a missing file, no permission) would read as "nothing
	// lost": refuse it.
	if !ended {
		return t, fmt.Errorf("chaos: failover: pg_waldump did not read to the end of the WAL:\n%s", out)
	}
	if lsnDiff(t.end, start) < 0 {
		t.end = start
	}
	return t, nil
}

// lsnDiff is a - b in bytes (0 when either does not parse).
func lsnDiff(a, b string) int64 {
	x, okA := parseLSN(a)
	y, okB := parseLSN(b)
	if !okA || !okB {
		return 0
	}
	return int64(x) - int64(y)
}

// parseLSN reads Postgres's "hi/lo" hexadecimal LSN.
func parseLSN(s string) (uint64, bool) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, false
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	return h<<32 | l, err1 == nil && err2 == nil
}

// pgTool finds a PostgreSQL program that may not be on PATH (Debian
// keeps pg_waldump beside the server, not in /usr/bin): on PATH, else
// beside pg_ctl.
func pgTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	ctl, err := exec.LookPath("pg_ctl")
	if err != nil {
		return "", fmt.Errorf("chaos: %s: %w", name, err)
	}
	if real, err := filepath.EvalSymlinks(ctl); err == nil {
		ctl = real
	}
	p := filepath.Join(filepath.Dir(ctl), name)
	if _, err := exec.LookPath(p); err != nil {
		return "", fmt.Errorf("chaos: %s is neither on PATH nor beside %s: %w", name, ctl, err)
	}
	return p, nil
}
