package agent

import (
	"errors"
	"io"
	"sync"

	"github.com/stratafs/strata/internal/client"
)

func (s *session) open(r *request) (answer, error) {
	rd, err := s.s.c.Open(s.ctx(), r.Path)
	if err != nil {
		return nil, err
	}
	h := s.s.files.add(&file{pid: s.pid, r: rd})
	return answer{"h": h, "status": statusOf(rd.Status), "size": rd.Size()}, nil
}

// read fills the shared memory at r.Shm with up to r.Len bytes of the
// file at r.Off, as the next chunk of a sequential read with r.Seq (the
// workers read ahead), else as a ranged read; it answers how many. Reads
// run concurrently with the reads before and after them on the connection
// (serveConn), each into its own part of the shared memory.
func (s *session) read(r *request) (answer, error) {
	f, err := s.file(r.H, true)
	if err != nil {
		return nil, err
	}
	dst, err := s.sh.span(r.Shm, r.Len)
	if err != nil {
		return nil, err
	}
	readAt := f.r.ReadAt
	if r.Seq {
		readAt = f.r.ReadAtAhead
	}
	n, err := readAt(dst, r.Off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return answer{"n": n}, err
}

// lend answers a short-circuit lease of the file's bytes [r.Off,
// r.Off+r.Len), or of as many of them as their block holds, with its
// descriptor (client.Lent says what the caller must do with it):
// "start" (the file's offset of the block's first byte), "first" and "end"
// (the block's bytes lent), "unit" and "crcs", and how often to look at the
// file ("look_ms") and for how long to keep it ("ttl_ms"); r.Seq has the
// worker read on ahead. Where there is no worker on this host it fails as
// unsupported: the caller reads.
func (s *session) lend(r *request) (answer, error) {
	f, err := s.file(r.H, true)
	if err != nil {
		return nil, err
	}
	l, err := f.r.Lend(r.Off, r.Len, !r.Seq)
	if err != nil {
		return nil, err
	}
	return answer{fdKey: l.File, "start": l.Start, "first": l.First, "end": l.End, "unit": l.Unit, "crcs": l.CRCs,
		"look_ms": client.LinkCheckEvery.Milliseconds(), "ttl_ms": client.TTL.Milliseconds()}, nil
}

// rangesInFlight bounds the reads one ranges request runs at once.
const rangesInFlight = 8

// ranges reads several ranges, of one file or many, concurrently: each
// file is opened once, and each range answers its count or its error.
func (s *session) ranges(r *request) (answer, error) {
	readers := map[string]*client.Reader{}
	opened := map[string]error{}
	for _, rg := range r.Ranges {
		if _, ok := opened[rg.Path]; !ok {
			readers[rg.Path], opened[rg.Path] = s.s.c.Open(s.ctx(), rg.Path)
		}
	}
	out := make([]answer, len(r.Ranges))
	sem := make(chan struct{}, rangesInFlight)
	var wg sync.WaitGroup
	for i, rg := range r.Ranges {
		dst, err := s.sh.span(rg.Shm, rg.Len)
		if err == nil {
			err = opened[rg.Path]
		}
		if err != nil {
			out[i] = answer{"cond": condOf(err), "msg": err.Error()}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			n, err := readers[rg.Path].ReadAt(dst, rg.Off)
			if err != nil && !errors.Is(err, io.EOF) {
				out[i] = answer{"cond": condOf(err), "msg": err.Error()}
				return
			}
			out[i] = answer{"n": n}
		}()
	}
	wg.Wait()
	for _, rd := range readers {
		if rd != nil {
			rd.Close()
		}
	}
	return answer{"ranges": out}, nil
}
