package databench

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
)

// op is one random read: file and offset.
type op struct {
	file int
	off  int64
}

// randomPhase measures random reads of each size: first cold, every round
// after emptying the cache (in cache mode, alternating with direct reads
// of the same offsets from the bucket), then (after an untimed read that
// caches everything again) warm and raw alternately.
func (r *runner) randomPhase(ctx context.Context) error {
	strata, raw, closeAll, err := r.openAll(ctx)
	if err != nil {
		return err
	}
	defer closeAll()
	if r.coldOK {
		for _, size := range r.cfg.RandomSizes {
			trials := []*trial{r.randomTrial(WayCold, size, strata)}
			if r.cache() {
				trials = append(trials, r.randomTrial(WayDirect, size, r.directFiles(ctx)))
			}
			if err := r.alternate(ctx, r.cfg.Repeat, trials...); err != nil {
				return err
			}
		}
		r.progressf("random read: reading every file once, untimed, to cache it again")
		if err := r.readStrata(ctx, r.strata); err != nil {
			return err
		}
	}
	for _, size := range r.cfg.RandomSizes {
		if err := r.alternate(ctx, r.cfg.Repeat, r.randomTrial(WayWarm, size, strata), r.randomTrial(WayRaw, size, raw)); err != nil {
			return err
		}
	}
	return nil
}

// openAll opens every main file, Strata and raw, for the random reads.
func (r *runner) openAll(ctx context.Context) (strata, raw []io.ReaderAt, closeAll func(), err error) {
	var closers []io.Closer
	closeAll = func() {
		for _, c := range closers {
			c.Close()
		}
	}
	for i := range r.cfg.Files {
		rd, err := r.c.Open(ctx, r.strata[i])
		if err != nil {
			closeAll()
			return nil, nil, nil, err
		}
		f, err := os.Open(r.raw[i])
		if err != nil {
			rd.Close()
			closeAll()
			return nil, nil, nil, err
		}
		closers = append(closers, rd, f)
		strata, raw = append(strata, rd), append(raw, f)
	}
	return strata, raw, closeAll, nil
}

// randomTrial is one way of random reads of size bytes over files. Rounds
// of the same number read the same offsets whatever the way, so that warm
// and raw do the same work, and cold and direct.
func (r *runner) randomTrial(way Way, size int, files []io.ReaderAt) *trial {
	round := 0
	var plan [][]op
	t := &trial{recs: newRecorders(r.cfg.Readers)}
	switch way {
	case WayWarm:
		t.files = r.warmFiles()
	case WayRaw:
		t.files = r.rawFiles()
	}
	t.prep = func(ctx context.Context) error {
		switch way {
		case WayCold:
			if err := r.dropCache(ctx); err != nil {
				return err
			}
			plan = r.coldPlan(size, round)
		case WayDirect:
			plan = r.coldPlan(size, round) // the cold reads' offsets
		default:
			plan = r.warmPlan(size, round)
		}
		round++
		return nil
	}
	t.run = func(_ context.Context, recs []*benchkit.Recorder) error {
		return r.readRandom(way, size, files, plan, recs)
	}
	ops := r.cfg.RandomReads
	if way == WayCold || way == WayDirect {
		ops = min(ops, r.slots(size))
	}
	bs := r.rep.Params.BlockSize
	if way == WayRaw || way == WayDirect {
		bs = 0
	}
	t.res = &Result{Kind: KindRandom, Way: way, Size: size, BlockSize: bs, Ops: int64(ops), Bytes: int64(ops) * int64(size)}
	return t
}

// slotBytes is the span of one cold read's slot for reads of size bytes.
func (r *runner) slotBytes(size int) int64 {
	return min(max(int64(size), slotSize), r.cfg.FileSize)
}

// slots is how many distinct slots the files have for reads of size.
func (r *runner) slots(size int) int {
	return r.cfg.Files * int(r.cfg.FileSize/r.slotBytes(size))
}

func (r *runner) rng(size, round int, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(r.cfg.Seed, uint64(size)<<32|uint64(round)<<8|salt))
}

// coldPlan spreads cold reads over distinct slots (1 MiB, or the read
// size if larger), in random order, each at a random size-aligned offset
// within its slot: no read finds what an earlier one fetched, however the
// cache rounds its fetches up (to its 1 MiB pages by default).
func (r *runner) coldPlan(size, round int) [][]op {
	slot := r.slotBytes(size)
	perFile := int(r.cfg.FileSize / slot)
	rng := r.rng(size, round, 1)
	order := rng.Perm(r.slots(size))[:min(r.cfg.RandomReads, r.slots(size))]
	plan := make([][]op, r.cfg.Readers)
	for k, s := range order {
		start := int64(s%perFile) * slot
		off := start + rng.Int64N(slot/int64(size))*int64(size)
		plan[k%r.cfg.Readers] = append(plan[k%r.cfg.Readers], op{file: s / perFile, off: off})
	}
	return plan
}

// warmPlan spreads reads uniformly over the files, at size-aligned
// offsets.
func (r *runner) warmPlan(size, round int) [][]op {
	rng := r.rng(size, round, 2)
	plan := make([][]op, r.cfg.Readers)
	for k := range r.cfg.RandomReads {
		off := rng.Int64N(r.cfg.FileSize/int64(size)) * int64(size)
		plan[k%r.cfg.Readers] = append(plan[k%r.cfg.Readers], op{file: rng.IntN(r.cfg.Files), off: off})
	}
	return plan
}

// readRandom runs the plan, one goroutine per reader, timing every read.
func (r *runner) readRandom(way Way, size int, files []io.ReaderAt, plan [][]op, recs []*benchkit.Recorder) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g, ops := range plan {
		wg.Go(func() {
			buf := make([]byte, size)
			for _, o := range ops {
				start := time.Now()
				n, err := files[o.file].ReadAt(buf, o.off)
				recs[g].Record(time.Since(start))
				if err == nil || (errors.Is(err, io.EOF) && n == len(buf)) {
					err = r.pat.check(string(way)+" random read", o.file, o.off, buf[:n], r.cfg.Verify)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
