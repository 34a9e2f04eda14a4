package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of /proc/<pid>/stat's CPU times: USER_HZ, 100
// on every Linux architecture Go runs on.
const clockTicks = 100

// procCPU is the CPU time (user and system) a process has used, from
// /proc/<pid>/stat (Linux).
func procCPU(pid int) (time.Duration, error) {
	t, err := procTimes(pid)
	return t.self, err
}

// procPeakRSS is the most resident memory a process has had, in bytes:
// VmHWM of /proc/<pid>/status (Linux).
func procPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: memory of %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("bench: no VmHWM in /proc/%d/status", pid)
}
