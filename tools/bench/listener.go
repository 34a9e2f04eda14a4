package main

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverCPU is the CPU time of the server that listens at a local address
// (the Temporal dev server, the Postgres postmaster): the listening
// process's own time, what its exited children used (it waited for them),
// and what its live children used (Postgres's backends).
func serverCPU(pid int) (time.Duration, error) {
	own, err := procTimes(pid)
	if err != nil {
		return 0, err
	}
	total := own.self + own.children
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		t, err := procTimes(child)
		if err != nil || t.ppid != pid {
			continue // gone, or not a child
		}
		total += t.self
	}
	return total, nil
}

// times are a process's CPU times from /proc/<pid>/stat.
type times struct {
	ppid     int
	self     time.Duration // utime + stime
	children time.Duration // cutime + cstime: children it waited for
}

func procTimes(pid int) (times, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return times{}, fmt.Errorf("bench: CPU time of %d: %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after it (field 3, state, is f[0]).
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return times{}, fmt.Errorf("bench: /proc/%d/stat: %q", pid, b)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return times{}, fmt.Errorf("bench: /proc/%d/stat: %q", pid, b)
	}
	n := make([]int64, 15)
	for _, k := range []int{1, 11, 12, 13, 14} {
		if n[k], err = strconv.ParseInt(f[k], 10, 64); err != nil {
			return times{}, fmt.Errorf("bench: /proc/%d/stat: %w", pid, err)
		}
	}
	tick := func(v int64) time.Duration { return time.Duration(v) * time.Second / clockTicks }
	return times{ppid: int(n[1]), self: tick(n[11] + n[12]), children: tick(n[13] + n[14])}, nil
}

// listenerPID is the process on this machine listening on TCP port port,
// found through /proc/net/tcp{,6} and the processes' socket descriptors;
// 0 when none is (the server is elsewhere, or not ours to read).
func listenerPID(port int) int {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st ... inode (field 9)
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == port {
				inodes["socket:["+fs[9]+"]"] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return 0
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && inodes[target] {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	return 0
}

// localListener is the pid of the local process serving addr (host:port,
// or a postgres:// URL), 0 when it is not on this machine.
func localListener(addr string) int {
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
		if u.Port() == "" {
			addr += ":5432"
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	return listenerPID(p)
}

// serverMeter measures the CPU time the local Temporal server and Postgres
// use from its creation to used.
type serverMeter struct {
	pids [2]int
	at   [2]time.Duration
}

func newServerMeter(temporal, dbURL string) *serverMeter {
	m := &serverMeter{pids: [2]int{localListener(temporal), localListener(dbURL)}}
	for i, pid := range m.pids {
		if pid == 0 {
			continue
		}
		if t, err := serverCPU(pid); err == nil {
			m.at[i] = t
		} else {
			m.pids[i] = 0
		}
	}
	return m
}

// used is the CPU time each used since the meter began, -1 for one that
// is not on this machine.
func (m *serverMeter) used() (temporal, postgres time.Duration) {
	out := [2]time.Duration{-1, -1}
	for i, pid := range m.pids {
		if pid == 0 {
			continue
		}
		if t, err := serverCPU(pid); err == nil {
			out[i] = t - m.at[i]
		}
	}
	return out[0], out[1]
}
