package cachefs

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Op names an FS or File operation, in fault rules.
type Op string

// The operations faults can be injected into.
const (
	OpOpen     Op = "open"
	OpRead     Op = "read"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpReadFile Op = "readfile"
	OpReadDir  Op = "readdir"
	OpMkdir    Op = "mkdir"
	OpRemove   Op = "remove"
	OpRename   Op = "rename"
)

// Faulty wraps an FS and fails the operations its rules select. It can also
// simulate a disk of a given size (LimitSpace): writes that would take the
// bytes it has seen written past the limit fail with ENOSPC, as on a disk
// other tenants have filled. It only injects; it never retries.
type Faulty struct {
	fs FS
	mu struct {
		sync.Mutex
		rules []*faultRule
		limit int64                      // 0: no space limit
		used  int64                      // bytes in files, as counted for limit
		files map[string]map[int64]int64 // name → offset → length written
		fired int
	}
}

type faultRule struct {
	op     Op
	substr string
	left   int // remaining firings; < 0: forever
	err    error
}

// NewFaulty returns fs with no faults.
func NewFaulty(fs FS) *Faulty {
	f := &Faulty{fs: fs}
	f.mu.files = map[string]map[int64]int64{}
	return f
}

// Fail makes the next n calls of op on names containing substr fail with err
// (wrapped in an *os.PathError). n < 0 means every call until Clear.
func (f *Faulty) Fail(op Op, substr string, n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.rules = append(f.mu.rules, &faultRule{op: op, substr: substr, left: n, err: err})
}

// Clear removes every rule and the space limit.
func (f *Faulty) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.rules = nil
	f.mu.limit = 0
}

// LimitSpace makes writes fail with ENOSPC once the bytes written through f
// to files that still exist would exceed limit. Files that existed before f
// wrapped the file system are not counted. 0 removes the limit.
func (f *Faulty) LimitSpace(limit int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.limit = limit
}

// Fired reports how many faults have been injected, ENOSPC from the space
// limit included.
func (f *Faulty) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.fired
}

// Used reports the bytes counted against the space limit.
func (f *Faulty) Used() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.used
}

// inject returns the error of the first rule matching op on name, if any.
func (f *Faulty) inject(op Op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.mu.rules {
		if r.op != op || r.left == 0 || !strings.Contains(name, r.substr) {
			continue
		}
		if r.left > 0 {
			r.left--
		}
		f.mu.fired++
		return &os.PathError{Op: string(op), Path: name, Err: r.err}
	}
	return nil
}

// OpenFile implements FS.
func (f *Faulty) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := f.inject(OpOpen, name); err != nil {
		return nil, err
	}
	file, err := f.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if flag&os.O_TRUNC != 0 {
		f.forget(name)
	}
	return &faultyFile{File: file, fs: f}, nil
}

// ReadFile implements FS.
func (f *Faulty) ReadFile(name string) ([]byte, error) {
	if err := f.inject(OpReadFile, name); err != nil {
		return nil, err
	}
	return f.fs.ReadFile(name)
}

// ReadDirNames implements FS.
func (f *Faulty) ReadDirNames(name string) ([]string, error) {
	if err := f.inject(OpReadDir, name); err != nil {
		return nil, err
	}
	return f.fs.ReadDirNames(name)
}

// MkdirAll implements FS.
func (f *Faulty) MkdirAll(name string, perm os.FileMode) error {
	if err := f.inject(OpMkdir, name); err != nil {
		return err
	}
	return f.fs.MkdirAll(name, perm)
}

// Remove implements FS.
func (f *Faulty) Remove(name string) error {
	if err := f.inject(OpRemove, name); err != nil {
		return err
	}
	err := f.fs.Remove(name)
	if err == nil {
		f.forget(name)
	}
	return err
}

// Rename implements FS.
func (f *Faulty) Rename(oldname, newname string) error {
	if err := f.inject(OpRename, oldname); err != nil {
		return err
	}
	err := f.fs.Rename(oldname, newname)
	if err == nil {
		f.mu.Lock()
		f.forgetLocked(newname)
		if w, ok := f.mu.files[oldname]; ok {
			delete(f.mu.files, oldname)
			f.mu.files[newname] = w
		}
		f.mu.Unlock()
	}
	return err
}

func (f *Faulty) forget(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgetLocked(name)
}

func (f *Faulty) forgetLocked(name string) {
	for _, n := range f.mu.files[name] {
		f.mu.used -= n
	}
	delete(f.mu.files, name)
}

// counted returns the bytes counted of name's write at off.
func (f *Faulty) counted(name string, off int64) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.files[name][off]
}

// cut forgets what was counted of name past size (a truncate).
func (f *Faulty) cut(name string, size int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for off, n := range f.mu.files[name] {
		if keep := max(0, min(n, size-off)); keep < n {
			f.mu.used -= n - keep
			f.mu.files[name][off] = keep
		}
	}
}

// reserve counts a write of n bytes at off against the space limit, or
// fails it with ENOSPC. Rewriting the same range costs nothing more.
func (f *Faulty) reserve(name string, off int64, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.mu.files[name]
	delta := int64(n) - w[off]
	if f.mu.limit > 0 && delta > 0 && f.mu.used+delta > f.mu.limit {
		f.mu.fired++
		return &os.PathError{Op: string(OpWrite), Path: name, Err: syscall.ENOSPC}
	}
	if w == nil {
		w = map[int64]int64{}
		f.mu.files[name] = w
	}
	w[off] = int64(n)
	f.mu.used += delta
	return nil
}

type faultyFile struct {
	File
	fs *Faulty
}

func (f *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.inject(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.inject(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	if err := f.fs.reserve(f.Name(), off, len(p)); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

// Allocate is a write of n bytes at offset 0, for the rules and the space
// limit (one that takes back nothing of a longer write there).
func (f *faultyFile) Allocate(n int64) error {
	if err := f.fs.inject(OpWrite, f.Name()); err != nil {
		return err
	}
	if err := f.fs.reserve(f.Name(), 0, int(max(n, f.fs.counted(f.Name(), 0)))); err != nil {
		return err
	}
	return f.File.Allocate(n)
}

// Truncate is a write, for the rules.
func (f *faultyFile) Truncate(size int64) error {
	if err := f.fs.inject(OpWrite, f.Name()); err != nil {
		return err
	}
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.fs.cut(f.Name(), size)
	return nil
}

func (f *faultyFile) Sync() error {
	if err := f.fs.inject(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

// errNoStatfs: the wrapped FS cannot tell the space available.
var errNoStatfs = errors.New("cachefs: the file system cannot tell its free space")
