package agent

import (
	"errors"
	"io"
	"os"
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

// lend answers short-circuit leases of the file's bytes [r.Off,
// r.Off+r.Len): one per block, up to maxLent, in order, each with its
// descriptor (client.Lent says what the caller must do with them), as
// "leases": "start" (the file's offset of the block's first byte),
// "first" and "end" (the block's bytes lent), "unit" and "crcs"; and how
// often to look at a file ("look_ms") and for how long to keep it
// ("ttl_ms"). r.Seq has the workers read on ahead. Where the first block
// has no worker on this host it fails as unsupported: the caller reads;
// the leases after the first stop at the first block that cannot be lent.
func (s *session) lend(r *request) (answer, error) {
	f, err := s.file(r.H, true)
	if err != nil {
		return nil, err
	}
	var leases []answer
	var files []*os.File
	for off, end := r.Off, r.Off+max(r.Len, 1); off < end && len(leases) < maxLent; {
		l, err := f.r.Lend(off, end-off, !r.Seq)
		if err != nil {
			if len(leases) == 0 {
				return nil, err
			}
			break
		}
		leases = append(leases, answer{"start": l.Start, "first": l.First, "end": l.End, "unit": l.Unit, "crcs": l.CRCs})
		files = append(files, l.File)
		off = l.Start + l.End
	}
	return answer{fdKey: files, "leases": leases, "look_ms": client.LinkCheckEvery.Milliseconds(),
		"ttl_ms": client.TTL.Milliseconds()}, nil
}

// maxLent bounds the leases of one answer (and the descriptors of one
// message).
const maxLent = 16

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
