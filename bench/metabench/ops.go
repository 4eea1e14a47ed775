package metabench

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/internal/client"
)

// thread is one benchmark thread's state during a phase.
type thread struct {
	c        *client.Client
	dir      string // the thread's own directory
	n        int    // operations this thread does in the phase
	rec      *benchkit.Recorder
	errs     int64
	firstErr error
	entries  int64
}

// action is one timed operation; src and dst are computed before the clock
// starts. It returns the entries a listing produced.
type action func(ctx context.Context, th *thread, src, dst string) (int, error)

// inlineData is the content of create512 files.
var inlineData = func() []byte {
	b := make([]byte, InlineSize)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}()

// actionOf returns what step st does once, and how it names its paths.
func actionOf(st step) (action, func(th *thread, j int) (src, dst string)) {
	path := func(th *thread, j int) (string, string) { return th.dir + "/" + st.set.name(j), "" }
	switch st.op {
	case OpMkdir:
		return doMkdir, path
	case OpCreate:
		return doCreate, path
	case OpStream:
		return doCreateStream, path
	case OpCreate512:
		return doCreate512, path
	case OpStat:
		return doStat, path
	case OpOpen:
		return openOf(st.set.size), path
	case OpList:
		return doList, func(th *thread, _ int) (string, string) { return th.dir, "" }
	case OpRename:
		to := st.set.renamed()
		return doRename, func(th *thread, j int) (string, string) {
			return th.dir + "/" + st.set.name(j), th.dir + "/" + to.name(j)
		}
	case OpDelete:
		return doDelete, path
	}
	panic("metabench: no action for " + string(st.op))
}

func doMkdir(ctx context.Context, th *thread, p, _ string) (int, error) {
	created, err := th.c.Mkdirs(ctx, p, 0o755)
	if err == nil && !created {
		err = fmt.Errorf("mkdirs %s: already existed", p)
	}
	return 0, err
}

func doCreate(ctx context.Context, th *thread, p, _ string) (int, error) {
	return 0, th.c.WriteFile(ctx, p, nil, client.CreateOptions{})
}

func doCreateStream(ctx context.Context, th *thread, p, _ string) (int, error) {
	w, err := th.c.Create(ctx, p, client.CreateOptions{})
	if err != nil {
		return 0, err
	}
	return 0, w.Close()
}

func doCreate512(ctx context.Context, th *thread, p, _ string) (int, error) {
	return 0, th.c.WriteFile(ctx, p, inlineData, client.CreateOptions{})
}

func doStat(ctx context.Context, th *thread, p, _ string) (int, error) {
	_, err := th.c.Stat(ctx, p)
	return 0, err
}

func openOf(size int) action {
	return func(ctx context.Context, th *thread, p, _ string) (int, error) {
		r, err := th.c.Open(ctx, p)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		n, err := io.Copy(io.Discard, r)
		if err == nil && n != int64(size) {
			err = fmt.Errorf("open %s: read %d bytes, want %d", p, n, size)
		}
		return 0, err
	}
}

func doList(ctx context.Context, th *thread, dir, _ string) (int, error) {
	n := 0
	err := th.c.List(ctx, dir, func(*client.FileStatus) error {
		n++
		return nil
	})
	return n, err
}

func doRename(ctx context.Context, th *thread, src, dst string) (int, error) {
	_, err := th.c.Rename(ctx, src, dst)
	return 0, err
}

var errNotDeleted = errors.New("nothing to delete")

func doDelete(ctx context.Context, th *thread, p, _ string) (int, error) {
	deleted, err := th.c.Delete(ctx, p, false)
	if err == nil && !deleted {
		err = fmt.Errorf("delete %s: %w", p, errNotDeleted)
	}
	return 0, err
}
