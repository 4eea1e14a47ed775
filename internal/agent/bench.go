package agent

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/cputime"
)

// benchRequest is a measurement of the Go client itself, made in the
// agent, so that python -m strata.bench compares Python with Go in one
// sitting, on the same files, through the same client (bench.py says what
// each kind does on the Python side).
type benchRequest struct {
	// Kind: "seq" reads Path whole with Read calls of IOSize bytes; "random"
	// reads Size bytes at each of Offsets with ReadAt; "stat" stats Path
	// Count times; "list" lists directory Path whole Count times; "create"
	// writes Count empty files Path/g<i> (WriteFile: one call each).
	Kind    string  `json:"kind"`
	Path    string  `json:"path"`
	IOSize  int     `json:"io_size"`
	Size    int     `json:"size"`
	Offsets []int64 `json:"offsets"`
	Count   int     `json:"count"`
}

// maxBenchIO bounds a benchmark's buffer.
const maxBenchIO = 64 << 20

// bench runs r.Bench with the Go client and answers the elapsed and CPU
// seconds, and the bytes or operations done.
func (s *session) bench(r *request) (answer, error) {
	b := r.Bench
	if b == nil {
		return nil, fmt.Errorf("%w: bench needs its parameters", errArg)
	}
	if b.IOSize < 0 || b.IOSize > maxBenchIO || b.Size < 0 || b.Size > maxBenchIO || b.Count < 0 {
		return nil, fmt.Errorf("%w: bench sizes are 0 to %d bytes", errArg, maxBenchIO)
	}
	cpu, start := cputime.Process(), time.Now()
	n, err := s.benchRun(b)
	if err != nil {
		return nil, err
	}
	return answer{"seconds": time.Since(start).Seconds(), "cpu": (cputime.Process() - cpu).Seconds(), "n": n}, nil
}

func (s *session) benchRun(b *benchRequest) (int64, error) {
	ctx, c := s.ctx(), s.s.c
	switch b.Kind {
	case "seq":
		return benchSeq(s, b)
	case "random":
		return benchRandom(s, b)
	case "stat":
		for range b.Count {
			if _, err := c.Stat(ctx, b.Path); err != nil {
				return 0, err
			}
		}
		return int64(b.Count), nil
	case "list":
		var n int64
		for range b.Count {
			err := c.List(ctx, b.Path, func(*client.FileStatus) error { n++; return nil })
			if err != nil {
				return 0, err
			}
		}
		return n, nil
	case "create":
		for i := range b.Count {
			if err := c.WriteFile(ctx, fmt.Sprintf("%s/g%d", b.Path, i), nil, client.CreateOptions{}); err != nil {
				return 0, err
			}
		}
		return int64(b.Count), nil
	}
	return 0, fmt.Errorf("%w: no benchmark %q", errArg, b.Kind)
}

func benchSeq(s *session, b *benchRequest) (int64, error) {
	rd, err := s.s.c.Open(s.ctx(), b.Path)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	buf := make([]byte, max(b.IOSize, 1))
	var n int64
	for {
		k, err := rd.Read(buf)
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func benchRandom(s *session, b *benchRequest) (int64, error) {
	rd, err := s.s.c.Open(s.ctx(), b.Path)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	buf := make([]byte, max(b.Size, 1))
	for _, off := range b.Offsets {
		if _, err := rd.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
	}
	return int64(len(b.Offsets)), nil
}
