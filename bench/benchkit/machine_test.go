package benchkit

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMachineString(t *testing.T) {
	m := Machine{Host: "h", CPUs: 2, GOMAXPROCS: 2, MemoryBytes: 8 << 30, GoVersion: "go1.26.8", OS: "linux", Arch: "amd64",
		LoadAvg: "0.10 0.20 0.30"}
	if got, want := m.String(), "2 cores, 8.0 GiB memory, go1.26.8 linux/amd64, host h, load average 0.10 0.20 0.30 at the start"; got != want {
		t.Errorf("host only:\n%s\nwant\n%s", got, want)
	}
	m.MemAvailable, m.DiskDir, m.DiskFree, m.FSType = 4<<30, "/raw", 100<<30, "ext4"
	if got, want := m.String(), "2 cores, 8.0 GiB memory (4.0 GiB available), 100.0 GiB free on /raw (ext4), go1.26.8"; !strings.HasPrefix(got, want) {
		t.Errorf("with disk:\n%s\nwant it to start\n%s", got, want)
	}
}

// TestMachineJSON checks that a description without WithDisk has no disk
// fields, as metabench's reports never had.
func TestMachineJSON(t *testing.T) {
	b, err := json.Marshal(DescribeMachine())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"disk_dir", "disk_free_bytes", "fs_type", "mem_available_bytes"} {
		if strings.Contains(string(b), k) {
			t.Errorf("%s in %s", k, b)
		}
	}
	if m := DescribeMachine().WithDisk(t.TempDir()); m.DiskDir == "" || m.CPUs < 1 {
		t.Errorf("WithDisk: %+v", m)
	}
}
