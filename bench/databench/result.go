package databench

import (
	"slices"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
)

// Kind is what a measurement does.
type Kind string

// The kinds of measurement.
const (
	KindWrite  Kind = "write"       // sequential write of every file
	KindSeq    Kind = "read"        // sequential read of every file, page cache warm
	KindDisk   Kind = "read, disk"  // the same, the files dropped from the page cache
	KindRandom Kind = "random read" // random reads of one size over all files
)

// Way is where the bytes come from or go to.
type Way string

// The ways.
const (
	WayStrata Way = "strata" // a write through a worker to the bucket
	WayCold   Way = "cold"   // a read from the bucket, the cache emptied first
	WayWarm   Way = "warm"   // a read from the cache
	WayRaw    Way = "raw"    // plain files on the local file system
	// WayDirect is cache mode's: the objects put or read straight from
	// the bucket, through the same link, with no Strata.
	WayDirect Way = "direct"
)

// Result is one measurement: Repeat rounds (one for writes) of the same
// work.
type Result struct {
	Kind Kind `json:"kind"`
	Way  Way  `json:"way"`
	// Size is the size of one read or write call.
	Size int `json:"size"`
	// BlockSize is the Strata block size of the files read or written; 0
	// for raw files.
	BlockSize int64 `json:"block_size,omitempty"`
	// Sweep marks the measurements of the block size sweep.
	Sweep bool `json:"sweep,omitempty"`
	// Bytes and Ops are one round's.
	Bytes int64 `json:"bytes"`
	Ops   int64 `json:"ops"`
	// Rounds are the rounds' wall times; Elapsed is their median.
	Rounds  []time.Duration `json:"-"`
	Elapsed time.Duration   `json:"-"`
	// CPU is this process's CPU time over all rounds.
	CPU time.Duration `json:"-"`
	// Counters are the workers' counters over all rounds (zero for raw;
	// for direct, the benchmark's own bytes to and from the bucket).
	Counters Counters `json:"counters"`
	// Latency is per call, over all rounds (random reads only).
	Latency benchkit.Latency `json:"-"`
	// residency is, per round, the share of the files read (the cache's
	// or the raw ones) that was in the OS page cache as the round began.
	residency []float64
}

// Resident is the least share of the files read that was in the OS page
// cache as a round began, -1 if not measured.
func (r *Result) Resident() float64 {
	if len(r.residency) == 0 {
		return -1
	}
	return slices.Min(r.residency)
}

// MBps is the median round's throughput in MB/s (10^6 bytes per second).
func (r *Result) MBps() float64 { return perSec(r.Bytes, r.Elapsed) / 1e6 }

// OpsPerSec is the median round's calls per second.
func (r *Result) OpsPerSec() float64 { return perSec(r.Ops, r.Elapsed) }

// CPUPercent is this process's CPU use over the rounds, 100 per busy core.
func (r *Result) CPUPercent() float64 {
	var wall time.Duration
	for _, d := range r.Rounds {
		wall += d
	}
	if wall <= 0 {
		return 0
	}
	return 100 * r.CPU.Seconds() / wall.Seconds()
}

// CPUPerGB is this process's CPU seconds per 10^9 bytes moved.
func (r *Result) CPUPerGB() float64 {
	if r.Bytes <= 0 || len(r.Rounds) == 0 {
		return 0
	}
	return r.CPU.Seconds() / (float64(r.Bytes) * float64(len(r.Rounds)) / 1e9)
}

// perRound divides a counter summed over the rounds by their number.
func (r *Result) perRound(v uint64) float64 { return float64(v) / float64(max(len(r.Rounds), 1)) }

func perSec(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Params are the run's parameters, for the report.
type Params struct {
	Mode        Mode    `json:"mode"`
	Dir         string  `json:"dir"`
	RawDir      string  `json:"raw_dir"`
	Files       int     `json:"files"`
	FileSize    int64   `json:"file_size"`
	BlockSize   int64   `json:"block_size"` // the files' actual block size
	IOSize      int     `json:"io_size"`
	Readers     int     `json:"readers"`
	Repeat      int     `json:"repeat"`
	RandomSizes []int   `json:"random_sizes"`
	RandomReads int     `json:"random_reads"`
	BlockSizes  []int64 `json:"block_sizes,omitempty"`
	Phases      []Phase `json:"phases"`
	DirectGet   int64   `json:"direct_get,omitempty"` // cache mode: the direct way's GET size
	DirectAhead int     `json:"direct_ahead,omitempty"`
	Verify      bool    `json:"verify"`
	Seed        uint64  `json:"seed"`
}

// Report is the outcome of a run.
type Report struct {
	Started time.Time        `json:"started"`
	Machine benchkit.Machine `json:"machine"`
	Cluster string           `json:"cluster"`
	Link    *Link            `json:"link,omitempty"`
	Params  Params           `json:"params"`
	Results []*Result        `json:"results"`
	// Notes say what was skipped and why.
	Notes []string `json:"notes,omitempty"`
}

// find returns the first result matching, nil if none.
func (rep *Report) find(kind Kind, way Way, size int, sweep bool, blockSize int64) *Result {
	for _, r := range rep.Results {
		if r.Kind == kind && r.Way == way && r.Sweep == sweep && (size == 0 || r.Size == size) &&
			(!sweep || r.BlockSize == blockSize) {
			return r
		}
	}
	return nil
}

// Target is one of the design's performance targets, as measured.
type Target struct {
	Name  string  `json:"name"`
	Want  float64 `json:"want"`  // the least ratio that meets it
	Ratio float64 `json:"ratio"` // measured
	Met   bool    `json:"met"`
}

// TargetRatio is the share the design's data path targets ask for: warm
// sequential reads at 90% of the raw local disk, cold ones at 90% of the
// link.
const TargetRatio = 0.9

// Targets evaluates the targets the run measured.
func (rep *Report) Targets() []Target {
	var out []Target
	add := func(name string, num, den float64) {
		if num > 0 && den > 0 {
			r := num / den
			out = append(out, Target{Name: name, Want: TargetRatio, Ratio: r, Met: r >= TargetRatio})
		}
	}
	if w, r := rep.find(KindSeq, WayWarm, 0, false, 0), rep.find(KindSeq, WayRaw, 0, false, 0); w != nil && r != nil {
		add("warm sequential read / raw local disk read (page cache warm)", w.MBps(), r.MBps())
	}
	if w, r := rep.find(KindDisk, WayWarm, 0, false, 0), rep.find(KindDisk, WayRaw, 0, false, 0); w != nil && r != nil {
		add("warm sequential read / raw local disk read (from the disk)", w.MBps(), r.MBps())
	}
	if c := rep.find(KindSeq, WayCold, 0, false, 0); c != nil && rep.Link != nil && rep.Link.Bandwidth > 0 {
		add("cold sequential read / bucket link bandwidth", c.MBps(), rep.Link.Bandwidth/1e6)
	}
	return out
}
