package agent

import (
	"errors"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// create opens a new file for writing: r.Overwrite replaces a file there,
// r.Parents makes missing parents (else the parent must exist).
func (s *session) create(r *request) (answer, error) {
	w, err := s.s.c.Create(s.ctx(), r.Path, client.CreateOptions{Perm: r.Perm, Overwrite: r.Overwrite,
		NonRecursive: !r.Parents, BlockSize: r.BlockSize})
	if err != nil {
		return nil, err
	}
	return answer{"h": s.s.files.add(&file{pid: s.pid, w: w})}, nil
}

func (s *session) append(r *request) (answer, error) {
	w, err := s.s.c.Append(s.ctx(), r.Path)
	if err != nil {
		return nil, err
	}
	return answer{"h": s.s.files.add(&file{pid: s.pid, w: w})}, nil
}

// write hands the shared memory's [r.Shm, r.Shm+r.Len) to the writer,
// which copies it before it returns.
func (s *session) write(r *request) (answer, error) {
	f, err := s.file(r.H, false)
	if err != nil {
		return nil, err
	}
	p, err := s.sh.span(r.Shm, r.Len)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err = f.w.Write(p)
	return nil, err
}

// flush makes what was written visible (hflush, Writer.Flush; with r.Sync
// durable too: hsync, Writer.Sync). A file of a cache-mode namespace is visible only
// once closed: a flush that is not r.Hard (Python's flush(), which
// wrappers call freely) does nothing there, a hard one (fsync) fails.
func (s *session) flush(r *request) (answer, error) {
	f, err := s.file(r.H, false)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Sync {
		err = f.w.Sync()
	} else {
		err = f.w.Flush()
	}
	if !r.Hard && errors.Is(err, fserr.ErrUnsupported) {
		err = nil
	}
	return nil, err
}

// put writes a whole file from the shared memory in one call (the
// client's WriteFile: one create for content within the inline limit).
func (s *session) put(r *request) (answer, error) {
	p, err := s.sh.span(r.Shm, r.Len)
	if err != nil {
		return nil, err
	}
	return nil, s.s.c.WriteFile(s.ctx(), r.Path, p, client.CreateOptions{Perm: r.Perm, Overwrite: r.Overwrite,
		NonRecursive: !r.Parents, BlockSize: r.BlockSize})
}
