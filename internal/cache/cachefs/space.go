package cachefs

// Spacer is an FS that can tell how many bytes are left for new data on the
// file system holding a directory (statfs's available blocks): an optional
// ability, asked through Available.
type Spacer interface {
	Available(dir string) (int64, error)
}

// Available returns the bytes fs says are left under dir; ok is false if fs
// cannot tell.
func Available(fs FS, dir string) (avail int64, ok bool) {
	s, isSpacer := fs.(Spacer)
	if !isSpacer {
		return 0, false
	}
	n, err := s.Available(dir)
	return n, err == nil
}

// Available implements Spacer: the space left under the simulated limit,
// else what the wrapped FS says.
func (f *Faulty) Available(dir string) (int64, error) {
	f.mu.Lock()
	limit, used := f.mu.limit, f.mu.used
	f.mu.Unlock()
	if limit > 0 {
		return max(limit-used, 0), nil
	}
	if s, ok := f.fs.(Spacer); ok {
		return s.Available(dir)
	}
	return 0, errNoStatfs
}
