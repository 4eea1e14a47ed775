package databench

import (
	"slices"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/mem"
)

func TestPatternDetectsMisplacedReads(t *testing.T) {
	p := newPattern(1, 1<<20)
	good := slices.Clone(p.at(1, 5<<20, 1<<20))
	if err := p.check("f", 1, 5<<20, good, false); err != nil {
		t.Fatal(err)
	}
	// Bytes of another file, or of the same file at a page, block or
	// period's distance, are caught by the spot check alone.
	for _, wrong := range [][]byte{p.at(2, 5<<20, 1<<20), p.at(1, 4<<20, 1<<20), p.at(1, 5<<20+64<<20, 1<<20), p.at(1, 5<<20+p.period, 1<<20)} {
		if slices.Equal(wrong, good) && wrong[0] == good[0] {
			continue // the pattern repeats after a period: identical bytes are no error
		}
		if err := p.check("f", 1, 5<<20, wrong, false); err == nil {
			t.Errorf("wrong bytes passed the spot check")
		}
	}
	// A flipped byte in the middle is caught by the full check only.
	bad := slices.Clone(good)
	bad[len(bad)/2] ^= 1
	if err := p.check("f", 1, 5<<20, bad, false); err != nil {
		t.Errorf("spot check looked at the middle: %v", err)
	}
	if err := p.check("f", 1, 5<<20, bad, true); err == nil {
		t.Errorf("full check missed a flipped byte")
	}
}

func TestColdPlanUsesDistinctSlots(t *testing.T) {
	r := &runner{cfg: Config{Files: 3, FileSize: 5<<20 + 100, Readers: 4, RandomReads: 1000, Seed: 7}}
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20, 2 << 20} {
		plan := r.coldPlan(size, 0)
		seen := map[[2]int64]bool{}
		n := 0
		slot := r.slotBytes(size)
		for _, ops := range plan {
			for _, o := range ops {
				n++
				k := [2]int64{int64(o.file), o.off / slot}
				if seen[k] {
					t.Errorf("size %d: slot %v read twice", size, k)
				}
				seen[k] = true
				if o.off%int64(size) != 0 || o.off+int64(size) > r.cfg.FileSize || o.file >= r.cfg.Files {
					t.Errorf("size %d: read %+v outside the files or unaligned", size, o)
				}
			}
		}
		if n != r.slots(size) {
			t.Errorf("size %d: %d reads, want one per slot (%d)", size, n, r.slots(size))
		}
	}
}

func TestWarmPlanIsTheSameForEveryWay(t *testing.T) {
	r := &runner{cfg: Config{Files: 2, FileSize: 8 << 20, Readers: 3, RandomReads: 50, Seed: 7}}
	a, b := r.warmPlan(4096, 1), r.warmPlan(4096, 1)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatal("two plans of the same round differ")
		}
	}
	if c := r.warmPlan(4096, 2); slices.Equal(a[0], c[0]) {
		t.Error("two rounds read the same offsets")
	}
}

func TestParsePhases(t *testing.T) {
	got, err := ParsePhases("random, seq,random")
	if err != nil || !slices.Equal(got, []Phase{PhaseRandom, PhaseSeq}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParsePhases("seq,bogus"); err == nil {
		t.Fatal("an unknown phase was accepted")
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{4096: "4KiB", 64 << 20: "64MiB", 1 << 30: "1GiB", 1000: "1000B", 3<<20 + 1: "3145729B"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	base := Config{Cluster: &Remote{}, RawDir: "/tmp/x"}
	for name, edit := range map[string]func(*Config){
		"relative dir":          func(c *Config) { c.Dir = "rel" },
		"random read too large": func(c *Config) { c.FileSize, c.RandomSizes = 1000, []int{4096} },
		"no raw dir":            func(c *Config) { c.RawDir = "" },
		"bad sweep":             func(c *Config) { c.BlockSizes = []int64{0} },
		"unknown mode":          func(c *Config) { c.Mode = "bogus" },
		"cache mode, no bucket": func(c *Config) { c.Mode = ModeCache },
		"cache mode, sweep": func(c *Config) {
			c.Mode, c.Cluster, c.BlockSizes = ModeCache, &bucketCluster{b: mem.New()}, []int64{1 << 20}
		},
		"block mode, cache-mode cluster": func(c *Config) { c.Cluster = &bucketCluster{b: mem.New()} },
		"negative direct GET":            func(c *Config) { c.DirectGet = -1 },
	} {
		c := base
		edit(&c)
		c.setDefaults()
		if err := c.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := base
	c.setDefaults()
	if err := c.validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	c = base
	c.Mode, c.Cluster = ModeCache, &bucketCluster{b: mem.New()}
	c.setDefaults()
	if err := c.validate(); err != nil {
		t.Errorf("cache mode: %v", err)
	}
	// A Bucketed cluster whose namespace is not in cache mode is block mode's.
	c = base
	c.Cluster = &bucketCluster{}
	c.setDefaults()
	if err := c.validate(); err != nil {
		t.Errorf("block mode, a cluster with no bucket: %v", err)
	}
}

// bucketCluster is a Remote with a bucket, for validation.
type bucketCluster struct {
	Remote
	b object.Store
}

func (c *bucketCluster) Bucket() object.Store { return c.b }
