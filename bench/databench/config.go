package databench

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Phase names a group of measurements that can be switched on and off.
// The write that every read needs always runs.
type Phase string

// The phases, in the order they run.
const (
	// PhaseSeq: sequential reads, cold, warm and raw, page cache warm.
	PhaseSeq Phase = "seq"
	// PhaseDisk: sequential reads, warm and raw, with the files' pages
	// dropped from the OS page cache first (fadvise DONTNEED), so both
	// come from the disk. Needs an Embedded cluster and Linux.
	PhaseDisk Phase = "disk"
	// PhaseRandom: random reads of each of Config.RandomSizes, cold, warm
	// and raw.
	PhaseRandom Phase = "random"
)

// AllPhases are the phases in the order they run.
var AllPhases = []Phase{PhaseSeq, PhaseDisk, PhaseRandom}

// ParsePhases reads a comma-separated list of phases.
func ParsePhases(s string) ([]Phase, error) {
	var out []Phase
	for _, f := range strings.Split(s, ",") {
		p := Phase(strings.TrimSpace(f))
		if p == "" {
			continue
		}
		if !slices.Contains(AllPhases, p) {
			return nil, fmt.Errorf("unknown phase %q (want seq, disk or random)", p)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Mode is the kind of namespace the run's files are in.
type Mode string

// The modes.
const (
	// ModeBlock: Strata owns the files, cut into blocks that are objects
	// of its own; the files are written through Strata.
	ModeBlock Mode = "block"
	// ModeCache: the files are objects another client put straight into
	// the bucket, seen through a cache-mode namespace over it; the cluster
	// must be Bucketed. The run adds the direct way: the same objects read
	// from the bucket with no Strata at all.
	ModeCache Mode = "cache"
)

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeBlock, ModeCache:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want block or cache)", s)
}

// Config is one run of the benchmark. Zero values take the defaults below.
type Config struct {
	// Cluster is where the Strata files go. Required.
	Cluster Cluster
	// Mode is block (the default) or cache mode.
	Mode Mode
	// Dir is the Strata directory the run's files go under; it must not
	// exist. Default /bench-data-<timestamp>.
	Dir string
	// RawDir is the local directory for the raw baseline files, on the same
	// file system as the worker's cache when the cluster is Embedded.
	// Required.
	RawDir string

	Files    int   // files written and read (default 2)
	FileSize int64 // bytes per file (default 256 MiB)
	// BlockSize is the block size of the files; 0 is the service's default.
	BlockSize int64
	// IOSize is the size of one sequential read or write call (default
	// 1 MiB).
	IOSize int
	// Readers is how many goroutines read (and write) at once. Sequential
	// phases give each file to one of them, so at most min(Readers, Files)
	// files stream at once; random phases run Readers goroutines over all
	// files. Default 4.
	Readers int
	// Repeat is how many rounds each read measurement runs; the report
	// gives the median round (default 3). Strata and raw rounds alternate,
	// so that whatever else loads the machine loads both alike.
	Repeat int

	// RandomSizes are the sizes of random reads (default 4 KiB, 64 KiB,
	// 1 MiB); RandomReads how many of each size each way does (default
	// 500). Cold random reads go to distinct 1 MiB-aligned slots, so that
	// none is served by what an earlier one fetched; there are at most
	// Files*FileSize/1MiB of them.
	RandomSizes []int
	RandomReads int

	// BlockSizes, if not empty, adds a sweep: for each block size, Files
	// files are written with it and read cold and warm. Block mode only: in
	// cache mode an object's blocks have the namespace's block size.
	BlockSizes []int64

	// DirectGet and DirectAhead are how the direct way (cache mode) reads
	// an object sequentially: ranged GETs of DirectGet bytes, DirectAhead
	// of them in flight ahead of the reader. The defaults are S3A's
	// prefetching input stream's (fs.s3a.prefetch.block.size 8M,
	// fs.s3a.prefetch.block.count 8).
	DirectGet   int64
	DirectAhead int

	// Phases to run (default AllPhases).
	Phases []Phase
	// Verify compares every byte read with what was written; without it
	// only the first and last bytes of each read are checked.
	Verify bool
	// Seed makes the content and the random offsets reproducible.
	Seed uint64
	// Keep leaves the Strata and raw files in place.
	Keep bool

	// Progress, if not nil, receives a line per measurement as it ends.
	Progress io.Writer
	// OnPhase, if not nil, is called when a timed measurement starts, with
	// its name; the function it returns is called when it ends. Profilers
	// hook in here.
	OnPhase func(name string) func()
}

const (
	defaultFiles       = 2
	defaultFileSize    = 256 << 20
	defaultIOSize      = 1 << 20
	defaultReaders     = 4
	defaultRepeat      = 3
	defaultRandomReads = 500
	defaultDirectGet   = 8 << 20
	defaultDirectAhead = 8
	// slotSize is the granularity cold random reads are spread over: the
	// largest default random read and the cache's default page size.
	slotSize = 1 << 20
)

// DefaultRandomSizes are the random read sizes unless configured.
var DefaultRandomSizes = []int{4 << 10, 64 << 10, 1 << 20}

func (c *Config) setDefaults() {
	if c.Dir == "" {
		c.Dir = "/bench-data-" + time.Now().Format("20060102-150405")
	}
	c.Dir = strings.TrimSuffix(c.Dir, "/")
	if c.Files == 0 {
		c.Files = defaultFiles
	}
	if c.FileSize == 0 {
		c.FileSize = defaultFileSize
	}
	if c.IOSize == 0 {
		c.IOSize = defaultIOSize
	}
	if c.Readers == 0 {
		c.Readers = defaultReaders
	}
	if c.Repeat == 0 {
		c.Repeat = defaultRepeat
	}
	if c.RandomSizes == nil {
		c.RandomSizes = DefaultRandomSizes
	}
	if c.RandomReads == 0 {
		c.RandomReads = defaultRandomReads
	}
	if c.Phases == nil {
		c.Phases = AllPhases
	}
	if c.Mode == "" {
		c.Mode = ModeBlock
	}
	if c.DirectGet == 0 {
		c.DirectGet = defaultDirectGet
	}
	if c.DirectAhead == 0 {
		c.DirectAhead = defaultDirectAhead
	}
}

func (c *Config) validate() error {
	switch {
	case c.Cluster == nil:
		return errors.New("databench: no cluster")
	case c.RawDir == "":
		return errors.New("databench: no directory for the raw files")
	case !strings.HasPrefix(c.Dir, "/") || c.Dir == "":
		return fmt.Errorf("databench: %q is not an absolute Strata path", c.Dir)
	case c.Files < 1 || c.Readers < 1 || c.Repeat < 1 || c.RandomReads < 1:
		return errors.New("databench: files, readers, repeat and random reads must be at least 1")
	case c.FileSize < 1 || c.IOSize < 1:
		return errors.New("databench: file size and I/O size must be at least 1 byte")
	case c.BlockSize < 0:
		return errors.New("databench: negative block size")
	case c.DirectGet < 1 || c.DirectAhead < 1:
		return errors.New("databench: the direct way's GET size and GETs in flight must be at least 1")
	}
	if err := c.validateMode(); err != nil {
		return err
	}
	for _, s := range c.RandomSizes {
		if s < 1 || int64(s) > c.FileSize {
			return fmt.Errorf("databench: random read size %d is not within the file size %d", s, c.FileSize)
		}
	}
	for _, b := range c.BlockSizes {
		if b < 1 {
			return fmt.Errorf("databench: block size %d in the sweep", b)
		}
	}
	return nil
}

// validateMode checks what cache mode needs: a cluster whose bucket the
// run can put the objects into, and no sweep.
func (c *Config) validateMode() error {
	b, ok := c.Cluster.(Bucketed)
	cache := ok && b.Bucket() != nil
	switch {
	case c.Mode == ModeBlock && cache:
		return errors.New("databench: the cluster's namespace is in cache mode: run in cache mode")
	case c.Mode == ModeBlock:
		return nil
	case c.Mode != ModeCache:
		return fmt.Errorf("databench: unknown mode %q", c.Mode)
	case !cache:
		return errors.New("databench: cache mode needs a cluster in cache mode whose bucket the benchmark reaches (the embedded one): it puts the objects there itself")
	}
	if len(c.BlockSizes) > 0 {
		return errors.New("databench: the block size sweep is block mode's: in cache mode every object's blocks have the namespace's block size")
	}
	return nil
}

func (c *Config) has(p Phase) bool { return slices.Contains(c.Phases, p) }
