package fusefs

// addFile registers h and returns its number.
func (t *handleTable) addFile(h *handle) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.next++
	h.fh = t.mu.next
	t.mu.files[h.fh] = h
	if h.writable {
		t.mu.writers[h.node] = h
	}
	return h.fh
}

// file returns the open file fh, or nil.
func (t *handleTable) file(fh uint64) *handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.files[fh]
}

// adopt registers h, a reader a successor opened again for a handle
// number its predecessor gave the kernel, under that number.
func (t *handleTable) adopt(fh uint64, h *handle) *handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.mu.files[fh]; old != nil {
		return old
	}
	h.fh = fh
	t.mu.files[fh] = h
	return h
}

func (t *handleTable) removeFile(fh uint64) *handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.mu.files[fh]
	delete(t.mu.files, fh)
	if h != nil && t.mu.writers[h.node] == h {
		delete(t.mu.writers, h.node)
	}
	return h
}

// writtenSize returns the length that the node's writer in this mount
// has given the file, committed or not.
func (t *handleTable) writtenSize(node uint64) (uint64, bool) {
	t.mu.Lock()
	h := t.mu.writers[node]
	t.mu.Unlock()
	if h == nil {
		return 0, false
	}
	return h.size()
}

func (t *handleTable) addDir(d *dirHandle) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.next++
	t.mu.dirs[t.mu.next] = d
	return t.mu.next
}

func (t *handleTable) dir(fh uint64) *dirHandle {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.dirs[fh]
}

func (t *handleTable) removeDir(fh uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mu.dirs, fh)
}

// releaseAll commits and closes every open file, at unmount.
func (t *handleTable) releaseAll(fs *FS) {
	t.mu.Lock()
	var hs []*handle
	for fh, h := range t.mu.files {
		hs = append(hs, h)
		delete(t.mu.files, fh)
	}
	t.mu.writers = map[uint64]*handle{}
	t.mu.Unlock()
	for _, h := range hs {
		h.release(fs)
	}
}
