package databench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
)

// WriteTable writes the report: a header (machine, cluster, link,
// parameters, what the ways mean), the sequential, random and sweep tables,
// the targets, and notes.
func (rep *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	rep.writeHeader(&b)
	if t := rep.seqTable(); t != "" {
		if rep.Params.Mode == ModeCache {
			b.WriteString("\nSequential, MB/s = 10^6 bytes/s of the median round; ratio: warm over raw of the same row kind, the bucket's ways over the link\n")
		} else {
			b.WriteString("\nSequential, MB/s = 10^6 bytes/s of the median round; ratio: warm and cold of the same row kind over raw, cold over the link\n")
		}
		b.WriteString(t)
	}
	if t := rep.randomTable(); t != "" {
		b.WriteString("\nRandom reads, size-aligned offsets; cold ones each to a 1 MiB slot no other read touched; latencies in ms over all rounds\n")
		b.WriteString(t)
	}
	if t := rep.sweepTable(); t != "" {
		b.WriteString("\nBlock size sweep (write, then cold and warm sequential reads of the same files)\n")
		b.WriteString(t)
	}
	rep.writeFooter(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (rep *Report) writeHeader(b *strings.Builder) {
	p := rep.Params
	fmt.Fprintf(b, "strata bench data, %s\n", rep.Started.Format(time.RFC3339))
	fmt.Fprintf(b, "machine:    %s\n", rep.Machine)
	fmt.Fprintf(b, "cluster:    %s\n", rep.Cluster)
	if l := rep.Link; l != nil {
		bw := "unlimited"
		if l.Bandwidth > 0 {
			bw = fmt.Sprintf("%.0f MB/s each way (%.2f Gb/s)", l.Bandwidth/1e6, l.Bandwidth*8/1e9)
		}
		fmt.Fprintf(b, "bucket:     a local directory behind a limiter: %s, %s latency per request\n", bw, l.Latency)
		if l.Scaling != "" {
			fmt.Fprintf(b, "            %s\n", l.Scaling)
		}
	}
	streams := min(p.Readers, p.Files)
	fmt.Fprintf(b, "parameters: %d files of %s, block size %s, sequential calls of %s, %d stream(s) sequential, %d readers random;\n",
		p.Files, formatSize(p.FileSize), formatSize(p.BlockSize), formatSize(int64(p.IOSize)), streams, p.Readers)
	fmt.Fprintf(b, "            %d round(s) per measurement (median shown), ways alternating; %d random reads per size and way; seed %d; verify %v\n",
		p.Repeat, p.RandomReads, p.Seed, p.Verify)
	if p.Mode == ModeCache {
		b.WriteString("mode:       cache: the files are objects put straight into the bucket (not written through Strata), read through\n")
		b.WriteString("            a cache-mode namespace over it (sync interval -1), then loaded into the cache for the warm reads.\n")
	}
	b.WriteString("ways:       cold = Strata, the worker's cache emptied before each round (bytes from the bucket, through the limiter);\n")
	if p.Mode == ModeCache {
		fmt.Fprintf(b, "            direct = no Strata: the same objects straight from the bucket through the same limiter, as S3A's\n"+
			"            prefetching stream reads (ranged GETs of %s, %d in flight per stream; random reads: one GET of exactly the range);\n",
			formatSize(p.DirectGet), p.DirectAhead)
	}
	b.WriteString("            warm = Strata, from the worker's cache (short-circuit when the worker shares this host);\n")
	b.WriteString("            raw = the same bytes in plain files on " + p.RawDir + ", read with read/pread.\n")
	b.WriteString("page cache: 'read' rows: Strata's cache files and the raw files are both in the OS page cache (just written\n")
	b.WriteString("            or read); 'read, disk' rows: each is dropped from it (fadvise DONTNEED) before its round.\n")
	if p.Mode == ModeCache {
		b.WriteString("            Writes: direct puts each object into the bucket through the limiter (multipart, 16 MiB parts, 4 in flight;\n")
		b.WriteString("            the bucket fsyncs it); raw's includes an fsync.\n")
		return
	}
	b.WriteString("            Writes: Strata's returns once every block is in the bucket (fsynced) and cached; raw's includes an fsync.\n")
}

func (rep *Report) seqTable() string {
	rows := [][]string{{"test", "way", "MB/s", "ratio", "secs", "cpu%", "cpu s/GB", "in RAM", "bucket MB", "rpc MB", "lent MB"}}
	link := rep.linkMBps()
	for _, r := range rep.Results {
		if r.Sweep || r.Kind == KindRandom {
			continue
		}
		ratio := "-"
		switch {
		case (r.Way == WayStrata || r.Way == WayCold || r.Way == WayDirect) && link > 0:
			ratio = fmt.Sprintf("%.2f of link", r.MBps()/link)
		case r.Way == WayWarm:
			if raw := rep.find(r.Kind, WayRaw, 0, false, 0); raw != nil && raw.MBps() > 0 {
				ratio = fmt.Sprintf("%.2f of raw", r.MBps()/raw.MBps())
			}
		}
		rows = append(rows, append([]string{string(r.Kind), string(r.Way), f0(r.MBps()), ratio,
			f3(r.Elapsed.Seconds()), f0(r.CPUPercent()), f3(r.CPUPerGB()), percentOrDash(r.Resident())}, counterCells(r)...))
	}
	if len(rows) == 1 {
		return ""
	}
	return benchkit.AlignRows(rows, 2, 2)
}

// counterCells are the MB per round moved from the bucket (written, for a
// write), over RPC, and lent to short-circuit readers.
func counterCells(r *Result) []string {
	if r.Way == WayRaw {
		return []string{"-", "-", "-"}
	}
	bucket := r.Counters.BucketRead
	if r.Kind == KindWrite {
		bucket = r.Counters.BucketWritten
	}
	if r.Way == WayDirect {
		return []string{f0(r.perRound(bucket) / 1e6), "-", "-"}
	}
	return []string{f0(r.perRound(bucket) / 1e6), f0(r.perRound(r.Counters.RPC) / 1e6), f0(r.perRound(r.Counters.ShortCircuit) / 1e6)}
}

func (rep *Report) randomTable() string {
	rows := [][]string{{"size", "way", "ops", "ops/s", "MB/s", "ratio", "p50", "p99", "p99.9", "max", "cpu%", "in RAM", "bucket KiB/op"}}
	link := rep.linkMBps()
	for _, r := range rep.Results {
		if r.Kind != KindRandom {
			continue
		}
		ratio, amp := "-", "-"
		if r.Way != WayRaw {
			amp = f0(r.perRound(r.Counters.BucketRead) / float64(max(r.Ops, 1)) / 1024)
		}
		switch {
		case (r.Way == WayCold || r.Way == WayDirect) && link > 0 && r.Elapsed > 0:
			ratio = fmt.Sprintf("%.2f link busy", r.perRound(r.Counters.BucketRead)/1e6/r.Elapsed.Seconds()/link)
		case r.Way == WayWarm:
			if raw := rep.find(KindRandom, WayRaw, r.Size, false, 0); raw != nil && raw.MBps() > 0 {
				ratio = fmt.Sprintf("%.2f of raw", r.MBps()/raw.MBps())
			}
		}
		l := r.Latency
		rows = append(rows, []string{formatSize(int64(r.Size)), string(r.Way), strconv.FormatInt(r.Ops, 10),
			f0(r.OpsPerSec()), f1(r.MBps()), ratio, benchkit.Millis(l.P50), benchkit.Millis(l.P99), benchkit.Millis(l.P999),
			benchkit.Millis(l.Max), f0(r.CPUPercent()), percentOrDash(r.Resident()), amp})
	}
	if len(rows) == 1 {
		return ""
	}
	return benchkit.AlignRows(rows, 2, 2)
}

func (rep *Report) sweepTable() string {
	rows := [][]string{{"block size", "write MB/s", "write/link", "cold MB/s", "cold/link", "warm MB/s"}}
	link := rep.linkMBps()
	ofLink := func(r *Result) string {
		if r == nil || link <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", r.MBps()/link)
	}
	mbps := func(r *Result) string {
		if r == nil {
			return "-"
		}
		return f0(r.MBps())
	}
	for _, r := range rep.Results {
		if !r.Sweep || r.Kind != KindWrite {
			continue
		}
		cold := rep.find(KindSeq, WayCold, 0, true, r.BlockSize)
		warm := rep.find(KindSeq, WayWarm, 0, true, r.BlockSize)
		rows = append(rows, []string{formatSize(r.BlockSize), mbps(r), ofLink(r), mbps(cold), ofLink(cold), mbps(warm)})
	}
	if len(rows) == 1 {
		return ""
	}
	return benchkit.AlignRows(rows, 1, 2)
}

func (rep *Report) writeFooter(b *strings.Builder) {
	if ts := rep.Targets(); len(ts) > 0 {
		b.WriteString("\nTargets\n")
		for _, t := range ts {
			verdict := "MET"
			if !t.Met {
				verdict = "MISSED"
			}
			fmt.Fprintf(b, "  %s: %.2f (want >= %.2f) %s\n", t.Name, t.Ratio, t.Want, verdict)
		}
	}
	rep.writeDirectComparison(b)
	var rpc, sc uint64
	warm := false
	for _, r := range rep.Results {
		if r.Way == WayWarm {
			warm = true
			rpc += r.Counters.RPC
			sc += r.Counters.ShortCircuit
		}
	}
	if warm {
		fmt.Fprintf(b, "\nWarm reads moved %d bytes over the worker's RPC; the worker lent %.0f MB of cache files to short-circuit reads", rpc, float64(sc)/1e6)
		if rpc == 0 {
			b.WriteString(" (all short-circuit).\n")
		} else {
			b.WriteString(" (NOT all short-circuit).\n")
		}
	}
	b.WriteString("cpu% is this process's CPU use (100 = one core): the client's and, embedded, the service's and worker's;\n")
	b.WriteString("cpu s/GB is that CPU time per 10^9 bytes moved: unlike MB/s, it hardly depends on what else loads the machine.\n")
	b.WriteString("in RAM is the least share of the local files a round read (the cache's, the raw ones) found in the OS page cache\n")
	b.WriteString("as it began (mincore): 'read' rows should show 100%, 'read, disk' rows 0%; anything else skews the comparison.\n")
	for _, n := range rep.Notes {
		b.WriteString("note: " + n + "\n")
	}
}

// writeDirectComparison compares cache mode's cold reads with the direct
// ones: no target, but what a user of the bucket gains or loses on a miss.
func (rep *Report) writeDirectComparison(b *strings.Builder) {
	cold, direct := rep.find(KindSeq, WayCold, 0, false, 0), rep.find(KindSeq, WayDirect, 0, false, 0)
	if cold == nil || direct == nil || direct.MBps() <= 0 {
		return
	}
	fmt.Fprintf(b, "\nCold sequential reads ran at %.2f of the direct reads' MB/s (the same objects through the same limiter, no Strata).\n",
		cold.MBps()/direct.MBps())
}

func (rep *Report) linkMBps() float64 {
	if rep.Link == nil {
		return 0
	}
	return rep.Link.Bandwidth / 1e6
}

// percentOrDash formats a share as a percentage, "-" if unknown.
func percentOrDash(v float64) string {
	if v < 0 {
		return "-"
	}
	return f0(100*v) + "%"
}

func f0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// WriteJSON writes the report as one JSON document; durations are in
// seconds (rounds, elapsed, CPU) or milliseconds (latencies).
func (rep *Report) WriteJSON(w io.Writer) error {
	type latency struct {
		P50  float64 `json:"p50_ms"`
		P99  float64 `json:"p99_ms"`
		P999 float64 `json:"p999_ms"`
		Max  float64 `json:"max_ms"`
		Mean float64 `json:"mean_ms"`
	}
	type result struct {
		*Result
		RoundSecs  []float64 `json:"round_seconds"`
		Seconds    float64   `json:"seconds"`
		MBps       float64   `json:"mb_per_sec"`
		OpsPerSec  float64   `json:"ops_per_sec"`
		CPUSeconds float64   `json:"cpu_seconds"`
		CPUPerGB   float64   `json:"cpu_seconds_per_gb"`
		Resident   *float64  `json:"page_cache_resident,omitempty"`
		Latency    *latency  `json:"latency,omitempty"`
	}
	msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	out := struct {
		*Report
		Results []result `json:"results"`
		Targets []Target `json:"targets"`
	}{Report: rep, Targets: rep.Targets()}
	for _, r := range rep.Results {
		x := result{Result: r, Seconds: r.Elapsed.Seconds(), MBps: r.MBps(), OpsPerSec: r.OpsPerSec(), CPUSeconds: r.CPU.Seconds(), CPUPerGB: r.CPUPerGB()}
		if v := r.Resident(); v >= 0 {
			x.Resident = &v
		}
		for _, d := range r.Rounds {
			x.RoundSecs = append(x.RoundSecs, d.Seconds())
		}
		if r.Kind == KindRandom {
			l := r.Latency
			x.Latency = &latency{msf(l.P50), msf(l.P99), msf(l.P999), msf(l.Max), msf(l.Mean)}
		}
		out.Results = append(out.Results, x)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
