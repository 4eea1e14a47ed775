package fusefs

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
)

// handle is an open file. A read-only one holds a reader, opened at open
// (close-to-open: it reads the file as it was then) and read from many
// threads at once without a lock. A writable one goes through three
// states, under mu: nothing written yet; a stream (a client.Writer) while
// the writes come in order, each where the last ended, which is how files
// are written through the workers at full speed; a stage (stage.go) once a
// write lands anywhere else, or the file is cut or read back, kept on
// local disk and committed whole at flush.
type handle struct {
	fh       uint64
	node     uint64
	path     string // the node's at open
	c        *client.Client
	writable bool
	reader   atomic.Pointer[client.Reader]
	next     atomic.Int64 // where the last read ended: the next read continues a stream
	written  atomic.Int64 // the file's length as written here; -1: nothing written
	mu       struct {
		sync.Mutex
		stream *client.Writer
		stage  *stage
		err    error // a failed commit: the next flush reports it
	}
}

func newHandle(node uint64, path string, c *client.Client, writable bool) *handle {
	h := &handle{node: node, path: path, c: c, writable: writable}
	h.written.Store(-1)
	return h
}

// size returns the length written here, if anything was.
func (h *handle) size() (uint64, bool) {
	n := h.written.Load()
	return uint64(n), n >= 0
}

// Open opens a file: a reader at once, or a writer when it first writes.
func (fs *FS) Open(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	defer fs.track.begin("open", in.NodeId)()
	c, e := fs.caller(&in.InHeader)
	if e != 0 {
		return status(e)
	}
	p, e := fs.nodePath(in.NodeId)
	if e != 0 {
		return status(e)
	}
	if in.Flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		h, e := fs.openReader(c, in.NodeId, p, out)
		if e != 0 {
			return status(e)
		}
		out.Fh = fs.handles.addFile(h)
		return fuse.OK
	}
	h := newHandle(in.NodeId, p, c, true)
	if e := fs.openWriter(h, in.Flags); e != 0 {
		return status(e)
	}
	out.Fh = fs.handles.addFile(h)
	return fuse.OK
}

// openReader opens p for reading. The kernel keeps the pages it cached of
// the file when the file is as it was at the last open here, and drops
// them otherwise: a change made through another mount is read after the
// next open (close-to-open).
func (fs *FS) openReader(c *client.Client, node uint64, p string, out *fuse.OpenOut) (*handle, syscall.Errno) {
	r, err := c.Open(fs.ctx, fs.uri(p))
	if err != nil {
		return nil, errnoOf(err)
	}
	h := newHandle(node, p, c, false)
	h.reader.Store(r)
	st := r.Status
	v := version{ino: st.InodeID, size: st.Length, mtime: st.ModTime.UnixNano()}
	if fs.nodes.setSeen(node, v) == v {
		out.OpenFlags |= fuse.FOPEN_KEEP_CACHE
	}
	return h, 0
}

// openWriter prepares a writable handle: a file opened with O_TRUNC is
// cut and streamed to at once; any other waits for its first write,
// after the access check open(2) makes.
func (fs *FS) openWriter(h *handle, flags uint32) syscall.Errno {
	if flags&syscall.O_TRUNC != 0 {
		return fs.truncateOpen(h)
	}
	st, e := fs.stat(h.c, h.path)
	if e != 0 {
		return e
	}
	if st.IsDir {
		return syscall.EISDIR
	}
	mask := uint32(2)
	if flags&syscall.O_ACCMODE == syscall.O_RDWR {
		mask |= 4
	}
	return fs.access(h.c, st, mask)
}

// truncateOpen cuts the file to nothing and opens its stream: by the
// service's truncate and an append, which keep the file's inode, owner
// and permissions, else (a cache-mode namespace) by creating it again.
func (fs *FS) truncateOpen(h *handle) syscall.Errno {
	err := h.c.Truncate(fs.ctx, fs.uri(h.path), 0)
	var w *client.Writer
	if err == nil {
		w, err = h.c.Append(fs.ctx, fs.uri(h.path))
	}
	if errnoOf(err) == syscall.EOPNOTSUPP {
		st, e := fs.stat(h.c, h.path)
		if e != 0 {
			return e
		}
		w, err = h.c.Create(fs.ctx, fs.uri(h.path), client.CreateOptions{Perm: st.Perm, Overwrite: true, NonRecursive: true})
	}
	if err != nil {
		return errnoOf(err)
	}
	h.mu.stream = w
	h.written.Store(0)
	return 0
}

// Read reads from the reader of a read-only handle without a lock, or
// from what a writable handle wrote.
func (fs *FS) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	defer fs.track.begin("read", in.NodeId)()
	h := fs.fileHandle(in.Fh, in.NodeId, &in.InHeader)
	if h == nil {
		return nil, fuse.EBADF
	}
	if h.writable {
		n, e := h.readWritable(fs, buf, int64(in.Offset))
		return fuse.ReadResultData(buf[:n]), status(e)
	}
	n, e := h.read(buf, int64(in.Offset))
	return fuse.ReadResultData(buf[:n]), status(e)
}

// streamSlack is how far from where the last read ended a read may land
// and still be taken for the same stream: the kernel's read-ahead sends
// several requests at once, which arrive in any order.
const streamSlack = 8 << 20

func (h *handle) read(buf []byte, off int64) (int, syscall.Errno) {
	r := h.reader.Load()
	last := h.next.Load()
	var n int
	var err error
	if off >= last-streamSlack && off <= last+streamSlack {
		n, err = r.ReadAtStream(buf, off)
	} else {
		n, err = r.ReadAt(buf, off)
	}
	h.next.Store(off + int64(n))
	if err != nil && !errors.Is(err, io.EOF) {
		return n, errnoOf(err)
	}
	return n, 0
}

// fileHandle returns the open file fh. A number the kernel got from a
// predecessor (this process took its connection over) is a file that
// predecessor opened: a reader is opened again, by the node's path, under
// that number; a writer's unwritten bytes died with it, so it is refused.
func (fs *FS) fileHandle(fh, node uint64, hdr *fuse.InHeader) *handle {
	if h := fs.handles.file(fh); h != nil {
		return h
	}
	c, e := fs.caller(hdr)
	if e != 0 {
		return nil
	}
	p, e := fs.nodePath(node)
	if e != 0 {
		return nil
	}
	var out fuse.OpenOut
	h, e := fs.openReader(c, node, p, &out)
	if e != 0 {
		return nil
	}
	fs.opt.Log.Info("a file opened before the takeover is read again", "path", p, "fh", fh)
	return fs.handles.adopt(fh, h)
}

// Write writes at in.Offset.
func (fs *FS) Write(_ <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	defer fs.track.begin("write", in.NodeId)()
	h := fs.handles.file(in.Fh)
	if h == nil {
		return 0, fuse.EIO // opened by a predecessor, whose unwritten bytes died with it
	}
	if !h.writable {
		return 0, fuse.EBADF
	}
	if e := h.write(fs, data, int64(in.Offset)); e != 0 {
		return 0, status(e)
	}
	return uint32(len(data)), fuse.OK
}

// Flush commits what the handle wrote: close(2) returns once the file is
// whole in the service, so that an open anywhere afterwards reads it.
func (fs *FS) Flush(_ <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	defer fs.track.begin("flush", in.NodeId)()
	h := fs.handles.file(in.Fh)
	if h == nil || !h.writable {
		return fuse.OK
	}
	return status(h.commit(fs))
}

// Fsync makes what was written durable: a stream's hsync, which the
// service logs on a quorum before it answers; a stage's commit.
func (fs *FS) Fsync(_ <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	defer fs.track.begin("fsync", in.NodeId)()
	h := fs.handles.file(in.Fh)
	if h == nil || !h.writable {
		return fuse.OK
	}
	return status(h.sync(fs))
}

// Release closes the handle; a commit that fails here has nobody to tell
// (close(2) returned at the flush), so it is logged.
func (fs *FS) Release(_ <-chan struct{}, in *fuse.ReleaseIn) {
	defer fs.track.begin("release", in.NodeId)()
	if h := fs.handles.removeFile(in.Fh); h != nil {
		h.release(fs)
	}
}

func (h *handle) release(fs *FS) {
	if r := h.reader.Swap(nil); r != nil {
		r.Close()
	}
	if !h.writable {
		return
	}
	if e := h.commit(fs); e != 0 {
		fs.opt.Log.Error("a file closed without its last writes", "path", h.path, "errno", e.Error())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.mu.stage != nil {
		h.mu.stage.close()
		h.mu.stage = nil
	}
}
