package fusefs

import (
	"errors"
	"io"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// maxHole is the largest gap a stream fills with zeros to reach a write
// past its end (a hole, as a seek past the end makes); a write further
// away goes to a stage instead.
const maxHole = 64 << 20

// Create creates a file and opens its stream: the file exists, empty,
// from now on, and its content becomes visible whole at close.
func (fs *FS) Create(_ <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	defer fs.track.begin("create", in.NodeId)()
	c, e := fs.caller(&in.InHeader)
	if e != 0 {
		return status(e)
	}
	p, e := fs.childPath(in.NodeId, name, true)
	if e != 0 {
		return status(e)
	}
	w, err := c.Create(fs.ctx, fs.uri(p), client.CreateOptions{Perm: in.Mode & 0o7777, NonRecursive: true})
	if errors.Is(err, fserr.ErrExists) && in.Flags&syscall.O_EXCL == 0 {
		return fs.createExisting(c, in, name, p, out)
	}
	if err != nil {
		return status(errnoOf(err))
	}
	st, e := fs.stat(c, p)
	if e != 0 {
		w.Close()
		return status(e)
	}
	fs.entry(in.NodeId, name, st, &out.EntryOut)
	h := newHandle(out.NodeId, p, c, true)
	h.mu.stream = w
	h.written.Store(0)
	out.Fh = fs.handles.addFile(h)
	return fuse.OK
}

// createExisting opens a file that a create without O_EXCL found there
// (made meanwhile by someone else), as open(2) does.
func (fs *FS) createExisting(c *client.Client, in *fuse.CreateIn, name, p string, out *fuse.CreateOut) fuse.Status {
	st, e := fs.stat(c, p)
	if e != 0 {
		return status(e)
	}
	fs.entry(in.NodeId, name, st, &out.EntryOut)
	h := newHandle(out.NodeId, p, c, true)
	if e := fs.openWriter(h, in.Flags); e != 0 {
		fs.nodes.forget(out.NodeId, 1)
		return status(e)
	}
	out.Fh = fs.handles.addFile(h)
	return fuse.OK
}

// curPath is the path of the handle's node now (it may have been renamed
// since the open), else the path it was opened with.
func (h *handle) curPath(fs *FS) string {
	if p, ok := fs.nodes.path(h.node); ok {
		return p
	}
	return h.path
}

// write writes data at off: to the stream while writes follow each
// other, else to a stage.
func (h *handle) write(fs *FS, data []byte, off int64) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.stage == nil && h.mu.stream != nil {
		end := int64(h.mu.stream.Size())
		if off > end && off-end <= maxHole {
			if e := h.streamWrite(make([]byte, off-end)); e != 0 {
				return e
			}
			end = off
		}
		if off == end {
			return h.streamWrite(data)
		}
		if e := h.commitLocked(fs); e != 0 {
			return e
		}
	}
	if h.mu.stage == nil {
		if e := h.startWriting(fs, off); e != 0 {
			return e
		}
		if h.mu.stream != nil {
			return h.streamWrite(data)
		}
	}
	if e := h.mu.stage.write(data, off); e != 0 {
		return e
	}
	h.written.Store(h.mu.stage.size)
	return 0
}

func (h *handle) streamWrite(data []byte) syscall.Errno {
	if _, err := h.mu.stream.Write(data); err != nil {
		h.mu.stream.Close() // removes a file it created, keeps an appended one
		h.mu.stream = nil
		h.written.Store(-1)
		return errnoOf(err)
	}
	h.written.Store(int64(h.mu.stream.Size()))
	return 0
}

// startWriting opens the file for a write at off: a stream appending to
// it when off is its end (block mode), else a stage of it.
func (h *handle) startWriting(fs *FS, off int64) syscall.Errno {
	p := h.curPath(fs)
	st, e := fs.stat(h.c, p)
	if e != 0 {
		return e
	}
	if off == int64(st.Length) {
		w, err := h.c.Append(fs.ctx, fs.uri(p))
		if err == nil {
			h.mu.stream = w
			return 0
		}
		if errnoOf(err) != syscall.EOPNOTSUPP {
			return errnoOf(err)
		}
	}
	s, e := fs.newStage(h.c, p, st)
	if e != 0 {
		return e
	}
	h.mu.stage = s
	return 0
}

// commit makes what the handle wrote the file's content, and reports a
// commit that failed before (at a release nobody could be told of).
func (h *handle) commit(fs *FS) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.commitLocked(fs)
}

func (h *handle) commitLocked(fs *FS) syscall.Errno {
	var err error
	switch {
	case h.mu.stream != nil:
		err = h.mu.stream.Close()
		h.mu.stream = nil
	case h.mu.stage != nil:
		err = h.mu.stage.commit(fs, h.c, h.curPath(fs))
		h.mu.stage.close()
		h.mu.stage = nil
	}
	h.written.Store(-1)
	if r := h.reader.Swap(nil); r != nil {
		r.Close() // of the content before
	}
	if err != nil {
		h.mu.err = err
	}
	e := errnoOf(h.mu.err)
	h.mu.err = nil
	return e
}

// sync makes the handle's writes durable: hsync of a stream, or a commit
// where the namespace has none (cache mode) and of a stage.
func (h *handle) sync(fs *FS) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.stream != nil {
		err := h.mu.stream.Sync()
		if errnoOf(err) != syscall.EOPNOTSUPP {
			return errnoOf(err)
		}
	}
	return h.commitLocked(fs)
}

// readWritable reads what a writable handle sees: its stage, or the file
// as committed (a stream is committed first: its bytes are in flight to
// the workers, not readable until then).
func (h *handle) readWritable(fs *FS, buf []byte, off int64) (int, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.stream != nil {
		if e := h.commitLocked(fs); e != 0 {
			return 0, e
		}
	}
	if h.mu.stage != nil {
		n, err := h.mu.stage.readAt(buf, off)
		return n, errnoOf(err)
	}
	r := h.reader.Load()
	if r == nil {
		var err error
		if r, err = h.c.Open(fs.ctx, fs.uri(h.curPath(fs))); err != nil {
			return 0, errnoOf(err)
		}
		h.reader.Store(r)
	}
	n, err := r.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, errnoOf(err)
	}
	return n, 0
}

// truncate cuts or extends the file the handle writes to size, staged:
// committed with the rest at flush.
func (h *handle) truncate(fs *FS, size int64) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.stream != nil && int64(h.mu.stream.Size()) == size {
		return 0
	}
	if h.mu.stage == nil {
		if e := h.commitLocked(fs); e != 0 {
			return e
		}
		p := h.curPath(fs)
		st, e := fs.stat(h.c, p)
		if e != 0 {
			return e
		}
		s, e := fs.newStage(h.c, p, st)
		if e != 0 {
			return e
		}
		h.mu.stage = s
	}
	h.mu.stage.truncate(size)
	h.written.Store(size)
	return 0
}
