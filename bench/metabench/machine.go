package metabench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes the host the benchmark ran on.
type Machine struct {
	Host        string `json:"host"`
	CPUs        int    `json:"cpus"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	CPUModel    string `json:"cpu_model,omitempty"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages when the run
	// started: other work on the machine skews the numbers.
	LoadAvg string `json:"load_avg,omitempty"`
}

// DescribeMachine reads the host's description; what it cannot find out
// (CPU model and memory come from /proc on Linux) stays empty.
func DescribeMachine() Machine {
	host, _ := os.Hostname()
	return Machine{Host: host, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUModel: procField("/proc/cpuinfo", "model name"), MemoryBytes: memTotal(),
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, LoadAvg: loadAvg()}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// String is the one-line description of the report's header.
func (m Machine) String() string {
	s := fmt.Sprintf("%d cores", m.CPUs)
	if m.CPUModel != "" {
		s += " (" + m.CPUModel + ")"
	}
	if m.GOMAXPROCS != m.CPUs {
		s += fmt.Sprintf(", GOMAXPROCS %d", m.GOMAXPROCS)
	}
	if m.MemoryBytes > 0 {
		s += fmt.Sprintf(", %.1f GiB memory", float64(m.MemoryBytes)/(1<<30))
	}
	s += fmt.Sprintf(", %s %s/%s, host %s", m.GoVersion, m.OS, m.Arch, m.Host)
	if m.LoadAvg != "" {
		s += ", load average " + m.LoadAvg + " at the start"
	}
	return s
}

// procField returns the value of the first "key : value" line of a /proc
// file that has key.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func memTotal() uint64 {
	fields := strings.Fields(procField("/proc/meminfo", "MemTotal")) // "24576000 kB"
	if len(fields) != 2 || fields[1] != "kB" {
		return 0
	}
	kb, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

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
