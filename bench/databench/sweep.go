package databench

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/bench/benchkit"
)

// sweep writes Files files with block size bs, Repeat rounds, then reads
// the last round's cold and warm, alternately, Repeat rounds; the files
// are removed afterwards (unless Keep) so that the sweep's steps do not
// fill the disk.
func (r *runner) sweep(ctx context.Context, bs int64) error {
	dir := fmt.Sprintf("%s/sweep-%s", r.cfg.Dir, formatSize(bs))
	var paths []string
	if err := r.alternate(ctx, r.cfg.Repeat, r.writeTrial(r.seqResult(KindWrite, WayStrata, bs, true), dir, &paths)); err != nil {
		return err
	}
	read := func(ctx context.Context, _ []*benchkit.Recorder) error { return r.readStrata(ctx, paths) }
	var trials []*trial
	if r.coldOK {
		trials = append(trials, &trial{res: r.seqResult(KindSeq, WayCold, bs, true), prep: r.dropCache, run: read})
	}
	trials = append(trials, &trial{res: r.seqResult(KindSeq, WayWarm, bs, true), run: read})
	if err := r.alternate(ctx, r.cfg.Repeat, trials...); err != nil {
		return err
	}
	if r.cfg.Keep {
		return nil
	}
	_, err := r.c.Delete(ctx, dir, true)
	return err
}
