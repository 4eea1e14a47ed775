package metabench

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// hostTicks reads the machine's busy and total CPU time from /proc/stat, in
// clock ticks; ok is false where there is no /proc/stat.
func hostTicks() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:9] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, true
}

// hostMeter measures the machine's CPU use over an interval.
type hostMeter struct {
	busy, total uint64
	ok          bool
}

func startHostMeter() hostMeter {
	b, t, ok := hostTicks()
	return hostMeter{b, t, ok}
}

// percent is the machine's CPU use since the start, as top shows it (100
// is one core busy), or -1 when unknown.
func (m hostMeter) percent() float64 {
	b, t, ok := hostTicks()
	if !ok || !m.ok || t <= m.total {
		return -1
	}
	return 100 * float64(runtime.NumCPU()) * float64(b-m.busy) / float64(t-m.total)
}
