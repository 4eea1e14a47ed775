package metabench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
)

func TestParseOps(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Op
		err  bool
	}{
		{in: "create,stat,list,rename,delete", want: DefaultOps},
		{in: " Create , open,,create512 ", want: []Op{OpCreate, OpOpen, OpCreate512}},
		{in: "mkdir", want: []Op{OpMkdir}},
		{in: "create,chmod", err: true},
		{in: "", err: true},
		{in: ",", err: true},
	} {
		got, err := ParseOps(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseOps(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseThreads(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{in: "1,4,16,64", want: DefaultThreads},
		{in: " 8 ", want: []int{8}},
		{in: "1,0", err: true},
		{in: "-2", err: true},
		{in: "x", err: true},
		{in: "", err: true},
	} {
		got, err := ParseThreads(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseThreads(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// describe renders a plan as "op[set]" words; untimed steps are starred.
func describe(steps []step) string {
	var w []string
	for _, s := range steps {
		d := fmt.Sprintf("%s[%s]", s.op, s.set.name(0))
		if !s.timed {
			d = "*" + d
		}
		w = append(w, d)
	}
	return strings.Join(w, " ")
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		ops  string
		want string
	}{
		{"create,stat,list,rename,delete",
			"create[f0-0] stat[f0-0] list[f0-0] rename[f0-0] delete[f0-0.r1]"},
		{"stat", "*create[f0-0] stat[f0-0]"},
		{"open", "*create512[w0-0] open[w0-0]"},
		{"create512,open,rename,rename,stat",
			"create512[w0-0] open[w0-0] rename[w0-0] rename[w0-0.r1] stat[w0-0.r2]"},
		{"create,delete,stat", "create[f0-0] delete[f0-0] *create[f2-0] stat[f2-0]"},
		{"create,create512,open", "create[f0-0] create512[w1-0] open[w1-0]"},
		{"mkdir,mkdir", "mkdir[d0-0] mkdir[d1-0]"},
		{"mkdir,list", "mkdir[d0-0] *create[f1-0] list[f1-0]"},
		{"delete,delete", "*create[f0-0] delete[f0-0] *create[f2-0] delete[f2-0]"},
	} {
		ops, err := ParseOps(tc.ops)
		if err != nil {
			t.Fatal(err)
		}
		if got := describe(plan(ops)); got != tc.want {
			t.Errorf("plan(%s)\n got %s\nwant %s", tc.ops, got, tc.want)
		}
	}
}

func TestPlanNamesAreUnique(t *testing.T) {
	ops := []Op{OpCreate, OpCreate, OpCreate512, OpMkdir, OpCreate}
	seen := map[string]bool{}
	for _, s := range plan(ops) {
		for j := range 100 {
			n := s.set.name(j)
			if seen[n] {
				t.Fatalf("name %s made twice", n)
			}
			seen[n] = true
		}
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct{ total, n int }{{20000, 64}, {7, 3}, {2, 5}, {64, 64}, {1, 1}} {
		sum, lo, hi := 0, tc.total, 0
		for i := range tc.n {
			s := share(tc.total, tc.n, i)
			sum, lo, hi = sum+s, min(lo, s), max(hi, s)
		}
		if sum != tc.total || hi-lo > 1 {
			t.Errorf("share(%d, %d): sum %d, spread %d..%d", tc.total, tc.n, sum, lo, hi)
		}
	}
}

var sampleResults = []Result{
	{Op: OpCreate, Threads: 64, Ops: 20000, Elapsed: 2 * time.Second, CPU: 3 * time.Second, HostCPU: 190,
		Latency: benchkit.Latency{P50: 1500 * time.Microsecond, P95: 2 * time.Millisecond, P99: 3 * time.Millisecond,
			P999: 10 * time.Millisecond, Max: 123456789 * time.Nanosecond}},
	{Op: OpList, Threads: 1, Ops: 10, Entries: 200000, Errors: 2, Elapsed: 500 * time.Millisecond,
		FirstError: "boom", HostCPU: -1, Latency: benchkit.Latency{P50: 40 * time.Millisecond, Max: 41 * time.Millisecond}},
}

func TestFormatTable(t *testing.T) {
	got := FormatTable(sampleResults)
	want := `op      threads    ops  errors  secs  ops/s  entries/s  cpu%  host%     p50    p95    p99   p99.9      max
create       64  20000       0  2.00  10000          -   150    190   1.500  2.000  3.000  10.000  123.457
list          1     10       2  0.50     20     400000     0      -  40.000  0.000  0.000   0.000   41.000
`
	if got != want {
		t.Errorf("FormatTable:\n%s\nwant:\n%s", got, want)
	}
}

func TestReportOutputs(t *testing.T) {
	rep := &Report{Started: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC),
		Machine: benchkit.Machine{Host: "h", CPUs: 2, GOMAXPROCS: 2, MemoryBytes: 8 << 30, GoVersion: "go1.26.8", OS: "linux", Arch: "amd64",
			LoadAvg: "0.10 0.20 0.30"},
		Service: Service{Target: "127.0.0.1:7700", Member: 1, Role: "StateLeader", Version: "dev"},
		Params:  Params{Dir: "/b", Threads: []int{1, 64}, Files: 20000, Ops: DefaultOps, ListPasses: 10, Conns: 1},
		Results: sampleResults}
	var tb bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 cores, 8.0 GiB memory, go1.26.8 linux/amd64, host h, load average 0.10 0.20 0.30",
		"127.0.0.1:7700 (strata dev, member 1, StateLeader)", "fsynced", "threads 1,64; 20000 operations",
		"ops create,stat,list,rename,delete", FormatTable(sampleResults), "2 operations FAILED"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table output lacks %q:\n%s", want, tb.String())
		}
	}
	var jb bytes.Buffer
	if err := rep.WriteJSON(&jb); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Machine benchkit.Machine
		Results []struct {
			Op            string  `json:"op"`
			OpsPerSec     float64 `json:"ops_per_sec"`
			EntriesPerSec float64 `json:"entries_per_sec"`
			CPUSeconds    float64 `json:"cpu_seconds"`
			FirstError    string  `json:"first_error"`
			Latency       struct {
				P50 float64 `json:"p50_ms"`
				Max float64 `json:"max_ms"`
			} `json:"latency"`
		} `json:"results"`
	}
	if err := json.Unmarshal(jb.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, jb.String())
	}
	r := doc.Results
	if doc.Machine.CPUs != 2 || len(r) != 2 || r[0].OpsPerSec != 10000 || r[0].CPUSeconds != 3 || r[0].Latency.P50 != 1.5 ||
		r[0].Latency.Max != 123.456789 || r[1].EntriesPerSec != 400000 || r[1].FirstError != "boom" {
		t.Errorf("JSON:\n%s", jb.String())
	}
}
