package metabench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
)

// Durability says what an acknowledged operation means, for the report.
const Durability = "a mutation is acknowledged once its Raft log entry is fsynced and applied " +
	"(entries proposed meanwhile share one fsync); stat, open and list read the member's applied state"

// Report is the outcome of a run.
type Report struct {
	Started time.Time
	Machine benchkit.Machine
	Service Service
	Params  Params
	Results []Result
}

// Errors is the number of failed operations over all phases.
func (r *Report) Errors() int64 {
	var n int64
	for _, res := range r.Results {
		n += res.Errors
	}
	return n
}

// WriteTable writes the report as a header and an aligned table.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	m, p, s := r.Machine, r.Params, r.Service
	fmt.Fprintf(&b, "strata bench meta, %s\n", r.Started.Format(time.RFC3339))
	fmt.Fprintf(&b, "machine:    %s\n", m)
	fmt.Fprintf(&b, "service:    %s (strata %s, member %d, %s)\n", s.Target, s.Version, s.Member, s.Role)
	fmt.Fprintf(&b, "durability: %s\n", Durability)
	fmt.Fprintf(&b, "parameters: threads %s; %d operations per phase, split between the threads; ops %s;\n",
		joinInts(p.Threads), p.Files, opNames(p.Ops))
	fmt.Fprintf(&b, "            %d list passes per thread; %d gRPC connection(s), %s; dir %s\n", p.ListPasses, p.Conns, coalescing(p.Batches), p.Dir)
	b.WriteString("\n")
	b.WriteString(FormatTable(r.Results))
	b.WriteString("\nops/s counts operations over the phase's wall time; latencies are per operation, in ms;\n")
	b.WriteString("cpu% is this process's CPU use (100 = one core): the client's, and an embedded service's;\n")
	fmt.Fprintf(&b, "host%% is the whole machine's (at most %d00): with the service, and anything else that ran.\n", m.CPUs)
	b.WriteString("list: one operation is a listStatus of a thread's whole directory; entries/s counts what it returned.\n")
	if n := r.Errors(); n > 0 {
		fmt.Fprintf(&b, "%d operations FAILED; see the errors column and the progress output.\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatTable lays results out as a table with a header row: the first
// column left-aligned, the numbers right-aligned.
func FormatTable(results []Result) string {
	rows := [][]string{{"op", "threads", "ops", "errors", "secs", "ops/s", "entries/s", "cpu%", "host%",
		"p50", "p95", "p99", "p99.9", "max"}}
	for _, r := range results {
		entries := "-"
		if r.Op == OpList {
			entries = strconv.FormatFloat(r.EntriesPerSec(), 'f', 0, 64)
		}
		l := r.Latency
		rows = append(rows, []string{string(r.Op), strconv.Itoa(r.Threads), strconv.FormatInt(r.Ops, 10),
			strconv.FormatInt(r.Errors, 10), strconv.FormatFloat(r.Elapsed.Seconds(), 'f', 2, 64),
			strconv.FormatFloat(r.OpsPerSec(), 'f', 0, 64), entries,
			strconv.FormatFloat(r.CPUPercent(), 'f', 0, 64), percentOrDash(r.HostCPU),
			benchkit.Millis(l.P50), benchkit.Millis(l.P95), benchkit.Millis(l.P99), benchkit.Millis(l.P999), benchkit.Millis(l.Max)})
	}
	return benchkit.AlignRows(rows, 1, 0)
}

func percentOrDash(p float64) string {
	if p < 0 {
		return "-"
	}
	return strconv.FormatFloat(p, 'f', 0, 64)
}

func coalescing(batches int) string {
	if batches < 0 {
		return "every call its own RPC"
	}
	return fmt.Sprintf("reads and mutations each coalesced into batches past %d in flight", batches)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// WriteJSON writes the report as one JSON document; durations are in
// milliseconds.
func (r *Report) WriteJSON(w io.Writer) error {
	type latency struct {
		P50  float64 `json:"p50_ms"`
		P95  float64 `json:"p95_ms"`
		P99  float64 `json:"p99_ms"`
		P999 float64 `json:"p999_ms"`
		Max  float64 `json:"max_ms"`
		Mean float64 `json:"mean_ms"`
	}
	type result struct {
		Op            Op      `json:"op"`
		Threads       int     `json:"threads"`
		Ops           int64   `json:"ops"`
		Errors        int64   `json:"errors"`
		FirstError    string  `json:"first_error,omitempty"`
		Entries       int64   `json:"entries,omitempty"`
		Seconds       float64 `json:"seconds"`
		OpsPerSec     float64 `json:"ops_per_sec"`
		EntriesPerSec float64 `json:"entries_per_sec,omitempty"`
		CPUSeconds    float64 `json:"cpu_seconds"`
		HostCPU       float64 `json:"host_cpu_percent"`
		Latency       latency `json:"latency"`
	}
	f := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	out := struct {
		Started    time.Time        `json:"started"`
		Machine    benchkit.Machine `json:"machine"`
		Service    Service          `json:"service"`
		Durability string           `json:"durability"`
		Params     Params           `json:"params"`
		Results    []result         `json:"results"`
	}{Started: r.Started, Machine: r.Machine, Service: r.Service, Durability: Durability, Params: r.Params}
	for _, res := range r.Results {
		l := res.Latency
		out.Results = append(out.Results, result{Op: res.Op, Threads: res.Threads, Ops: res.Ops, Errors: res.Errors,
			FirstError: res.FirstError, Entries: res.Entries, Seconds: res.Elapsed.Seconds(),
			OpsPerSec: res.OpsPerSec(), EntriesPerSec: res.EntriesPerSec(), CPUSeconds: res.CPU.Seconds(),
			HostCPU: res.HostCPU,
			Latency: latency{f(l.P50), f(l.P95), f(l.P99), f(l.P999), f(l.Max), f(l.Mean)}})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
