package cputime

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux the project runs on).
const userHZ = 100

// Of returns the CPU time (user and system) process pid has used so far,
// as Linux's /proc tells it (to a hundredth of a second), or 0 if the
// system cannot tell: another process's, a server's a benchmark started.
func Of(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields after its closing one start with the state, field 3.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * time.Second / userHZ
}
