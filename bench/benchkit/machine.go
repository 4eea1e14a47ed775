package benchkit

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes the host a benchmark ran on. The memory and disk
// fields after MemoryBytes are filled only by WithDisk, for a benchmark
// whose data must fit; they are left out of the JSON when empty.
type Machine struct {
	Host        string `json:"host"`
	CPUs        int    `json:"cpus"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	CPUModel    string `json:"cpu_model,omitempty"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// MemAvailable is what the kernel estimated available (free plus
	// reclaimable) when the run started: what the page cache may hold.
	MemAvailable uint64 `json:"mem_available_bytes,omitempty"`
	// DiskFree is what was free on the file system of DiskDir when the
	// run started; FSType its type (ext4, xfs, tmpfs, ...).
	DiskDir   string `json:"disk_dir,omitempty"`
	DiskFree  uint64 `json:"disk_free_bytes,omitempty"`
	FSType    string `json:"fs_type,omitempty"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// LoadAvg is /proc/loadavg's 1, 5 and 15 minute averages when the run
	// started: other work on the machine skews the numbers.
	LoadAvg string `json:"load_avg,omitempty"`
}

// DescribeMachine describes this host; what it cannot find out (CPU model,
// memory and load come from /proc on Linux) stays empty.
func DescribeMachine() Machine {
	host, _ := os.Hostname()
	return Machine{Host: host, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUModel: procField("/proc/cpuinfo", "model name"), MemoryBytes: memInfo("MemTotal"),
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, LoadAvg: loadAvg()}
}

// WithDisk adds to m what a benchmark of file data needs to know fits: the
// memory available now and the free space and type of dir's file system.
func (m Machine) WithDisk(dir string) Machine {
	free, fsType := DiskFree(dir)
	m.MemAvailable = memInfo("MemAvailable")
	m.DiskDir, m.DiskFree, m.FSType = dir, free, fsName(fsType)
	return m
}

// String is the one-line description of a report's header.
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
		if m.MemAvailable > 0 {
			s += fmt.Sprintf(" (%.1f GiB available)", float64(m.MemAvailable)/(1<<30))
		}
	}
	if m.DiskFree > 0 {
		s += fmt.Sprintf(", %.1f GiB free on %s", float64(m.DiskFree)/(1<<30), m.DiskDir)
		if m.FSType != "" {
			s += " (" + m.FSType + ")"
		}
	}
	s += fmt.Sprintf(", %s %s/%s, host %s", m.GoVersion, m.OS, m.Arch, m.Host)
	if m.LoadAvg != "" {
		s += ", load average " + m.LoadAvg + " at the start"
	}
	return s
}

// fsName names the Linux file system magic numbers a benchmark is likely
// to meet.
func fsName(t int64) string {
	switch t {
	case 0:
		return ""
	case 0xef53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x01021994:
		return "tmpfs"
	case 0x9123683e:
		return "btrfs"
	case 0x794c7630:
		return "overlayfs"
	case 0x2fc12fc1:
		return "zfs"
	}
	return fmt.Sprintf("fs type %#x", t)
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

// memInfo reads a /proc/meminfo field in bytes, 0 if unknown.
func memInfo(key string) uint64 {
	fields := strings.Fields(procField("/proc/meminfo", key)) // "24576000 kB"
	if len(fields) != 2 || fields[1] != "kB" {
		return 0
	}
	kb, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}
