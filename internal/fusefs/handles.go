package fusefs

import "sync"

// handleTable holds the open files and directories by the handle number
// the kernel was given, and per node what its writers in this mount
// share. Numbers start at the time the process started, so that a
// successor never gives out its predecessor's.
type handleTable struct {
	mu struct {
		sync.Mutex
		next   uint64
		files  map[uint64]*handle
		dirs   map[uint64]*dirHandle
		open   map[uint64]int         // open files by node
		states map[uint64]*writeState // by node, while a handle writes it
		hidden map[uint64]string      // by node: an unlinked open file's hidden path
	}
}

func (t *handleTable) init(start uint64) {
	t.mu.next = start
	t.mu.files = map[uint64]*handle{}
	t.mu.dirs = map[uint64]*dirHandle{}
	t.mu.open = map[uint64]int{}
	t.mu.states = map[uint64]*writeState{}
	t.mu.hidden = map[uint64]string{}
}

// addFile registers h, with the node's shared write state if h writes,
// and returns its number.
func (t *handleTable) addFile(h *handle, writable bool) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.next++
	h.fh = t.mu.next
	t.mu.files[h.fh] = h
	t.mu.open[h.node]++
	if writable {
		ws := t.mu.states[h.node]
		if ws == nil {
			ws = newWriteState(h.node, h.path)
			t.mu.states[h.node] = ws
		}
		ws.refs++
		h.ws = ws
	}
	return h.fh
}

// state returns the node's write state while a handle writes it, or nil.
func (t *handleTable) state(node uint64) *writeState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.states[node]
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
	t.mu.open[h.node]++
	return h
}

// removeFile unregisters fh and returns it, whether it was its write
// state's last handle, and the hidden path to delete if it was the last
// open file of a node unlinked meanwhile.
func (t *handleTable) removeFile(fh uint64) (h *handle, lastWriter bool, hidden string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h = t.mu.files[fh]
	if h == nil {
		return nil, false, ""
	}
	delete(t.mu.files, fh)
	if h.ws != nil {
		h.ws.refs--
		if lastWriter = h.ws.refs == 0; lastWriter {
			delete(t.mu.states, h.node)
		}
	}
	if t.mu.open[h.node]--; t.mu.open[h.node] == 0 {
		delete(t.mu.open, h.node)
		hidden = t.mu.hidden[h.node]
		delete(t.mu.hidden, h.node)
	}
	return h, lastWriter, hidden
}

// isOpen reports whether node has open files here.
func (t *handleTable) isOpen(node uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.open[node] > 0
}

// hide records that node, unlinked while open, lives on at path until
// its last open file is closed.
func (t *handleTable) hide(node uint64, path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.hidden[node] = path
}

// isHidden reports whether node was unlinked while open (its link count
// is 0).
func (t *handleTable) isHidden(node uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.mu.hidden[node]
	return ok
}

// writtenSize returns the length that the node's writers in this mount
// have given the file, committed or not.
func (t *handleTable) writtenSize(node uint64) (uint64, bool) {
	ws := t.state(node)
	if ws == nil {
		return 0, false
	}
	n := ws.written.Load()
	return uint64(n), n >= 0
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

// all returns the numbers of every open file, for the unmount's release.
func (t *handleTable) all() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	fhs := make([]uint64, 0, len(t.mu.files))
	for fh := range t.mu.files {
		fhs = append(fhs, fh)
	}
	return fhs
}
