package agent

import (
	"fmt"
	"sync"

	"github.com/stratafs/strata/internal/client"
)

// file is an open file of a caller process: a reader or a writer. Its
// mutex orders the calls that must not overlap: a writer's, and a reader's
// sequential reads (client.Reader's Read and Seek); ranged reads (ReadAt)
// run concurrently without it.
type file struct {
	pid int32
	mu  sync.Mutex
	r   *client.Reader
	w   *client.Writer
}

// files is the agent's table of open files by handle.
type files struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*file
}

func (fs *files) add(f *file) uint64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.next++
	fs.m[fs.next] = f
	return fs.next
}

// get returns handle h's file if process pid opened it.
func (fs *files) get(h uint64, pid int32) (*file, error) {
	fs.mu.Lock()
	f := fs.m[h]
	fs.mu.Unlock()
	if f == nil || f.pid != pid {
		return nil, fmt.Errorf("%w: no open file %d in this process (a forked child opens its files again)", errArg, h)
	}
	return f, nil
}

// remove takes handle h of process pid out of the table and returns it.
func (fs *files) remove(h uint64, pid int32) (*file, error) {
	f, err := fs.get(h, pid)
	if err != nil {
		return nil, err
	}
	fs.mu.Lock()
	delete(fs.m, h)
	fs.mu.Unlock()
	return f, nil
}

// closeAll closes the files that match and then removes them: readers
// closed, writers aborted (docs: package doc, Files). NB: removed only once
// closed, so that count tells when a gone process's writers are all
// aborted.
func (fs *files) closeAll(match func(*file) bool) {
	gone := map[uint64]*file{}
	fs.mu.Lock()
	for h, f := range fs.m {
		if match(f) {
			gone[h] = f
		}
	}
	fs.mu.Unlock()
	for _, f := range gone {
		f.mu.Lock()
		if f.r != nil {
			f.r.Close()
		}
		if f.w != nil {
			f.w.Abort()
		}
		f.mu.Unlock()
	}
	fs.mu.Lock()
	for h := range gone {
		delete(fs.m, h)
	}
	fs.mu.Unlock()
}

// count returns how many files are open.
func (fs *files) count() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.m)
}
