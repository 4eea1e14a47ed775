package fusefs

import (
	"errors"
	"io"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// handle is an open file. A read-only one holds a reader, opened at open
// (close-to-open: it reads the file as it was then) and read from many
// threads at once without a lock. A writable one shares its node's write
// state (write.go) with every other handle writing the node here, as the
// descriptors of one local file share its content.
type handle struct {
	fh     uint64
	node   uint64
	path   string // the node's at open
	c      *client.Client
	reader atomic.Pointer[client.Reader]
	next   atomic.Int64 // where the last read ended: the next read continues a stream
	ws     *writeState  // nil: read-only
}

// Open opens a file: a reader at once, or the node's write state.
func (fs *FS) Open(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	defer fs.track.begin("open", in.NodeId)()
	c, p, e := fs.callerAt(&in.InHeader)
	if e != 0 {
		return status(e)
	}
	if in.Flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		h, e := fs.openReader(c, in.NodeId, p, out)
		if e != 0 {
			return status(e)
		}
		out.Fh = fs.handles.addFile(h, false)
		return fuse.OK
	}
	if e := fs.checkWritable(c, p, in.Flags); e != 0 {
		return status(e)
	}
	h := &handle{node: in.NodeId, path: p, c: c}
	out.Fh = fs.handles.addFile(h, true)
	if in.Flags&syscall.O_TRUNC != 0 {
		if e := h.ws.truncate(fs, c, 0); e != 0 {
			fs.release(out.Fh)
			return status(e)
		}
	}
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
	h := &handle{node: node, path: p, c: c}
	h.reader.Store(r)
	if fs.nodes.opened(node, versionOf(r.Status)) {
		out.OpenFlags |= fuse.FOPEN_KEEP_CACHE
	}
	return h, 0
}

// checkWritable makes open(2)'s access check for a writer: the first
// write may come much later, and must not be the first to fail.
func (fs *FS) checkWritable(c *client.Client, p string, flags uint32) syscall.Errno {
	st, e := fs.stat(c, p)
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
	return fs.access(c, st, mask)
}

// Read reads from the reader of a read-only handle without a lock, or
// what a writable handle's node holds now.
func (fs *FS) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	defer fs.track.begin("read", in.NodeId)()
	h := fs.fileHandle(in.Fh, in.NodeId, &in.InHeader)
	if h == nil {
		return nil, fuse.EIO
	}
	var n int
	var e syscall.Errno
	if h.ws != nil {
		n, e = h.ws.readAt(fs, h.c, buf, int64(in.Offset))
	} else {
		n, e = h.read(fs, buf, int64(in.Offset))
	}
	if e != 0 {
		// NB: no result with an error: go-fuse sends a result's status,
		// OK, and the kernel would take the failed read for the end of
		// the file.
		return nil, status(e)
	}
	return fuse.ReadResultData(buf[:n]), fuse.OK
}

// streamSlack is how far from where the last read ended a read may land
// and still be taken for the same stream: the kernel's read-ahead sends
// several requests at once, which arrive in any order.
const streamSlack = 8 << 20

func (h *handle) read(fs *FS, buf []byte, off int64) (int, syscall.Errno) {
	r := h.reader.Load()
	last := h.next.Load()
	var n int
	var err error
	stream := off >= last-streamSlack && off <= last+streamSlack
	err = retryUnavailable(fs.opt.ReadRetry, func() error {
		if stream {
			n, err = r.ReadAtStream(buf, off)
		} else {
			n, err = r.ReadAt(buf, off)
		}
		return err
	})
	h.next.Store(off + int64(n))
	if err != nil && !errors.Is(err, io.EOF) {
		return n, errnoOf(err)
	}
	return n, 0
}

// retryUnavailable runs read again while it finds no worker that can
// serve it, for up to budget (Options.ReadRetry): the client tries each
// live worker once per read, and a worker restarting (or the last one
// moving) would otherwise fail a reader with EIO. This is the mount's one
// retry, and only of reads, which may be made again.
func retryUnavailable(budget time.Duration, read func() error) error {
	deadline := time.Now().Add(budget)
	wait := 50 * time.Millisecond
	for {
		err := read()
		if err == nil || !errors.Is(err, fserr.ErrUnavailable) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

// fileHandle returns the open file fh. A number the kernel got from a
// predecessor (this process took its connection over) is a file that
// predecessor opened: it is read again, by the node's path, under that
// number. (A writer's unwritten bytes died with the predecessor: its
// writes fail, EIO.)
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
	if h.ws == nil {
		return 0, fuse.EBADF
	}
	if e := h.ws.write(fs, h.c, data, int64(in.Offset)); e != 0 {
		return 0, status(e)
	}
	return uint32(len(data)), fuse.OK
}

// Flush commits what the node's writers wrote: close(2) returns once the
// file is whole in the service, so that an open anywhere afterwards
// reads it.
func (fs *FS) Flush(_ <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	defer fs.track.begin("flush", in.NodeId)()
	h := fs.handles.file(in.Fh)
	if h == nil || h.ws == nil {
		return fuse.OK
	}
	return status(h.ws.commit(fs, h.c))
}

// Fsync makes what was written durable: a stream's hsync, which the
// service logs on a quorum before it answers; a stage's commit.
func (fs *FS) Fsync(_ <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	defer fs.track.begin("fsync", in.NodeId)()
	h := fs.handles.file(in.Fh)
	if h == nil || h.ws == nil {
		return fuse.OK
	}
	return status(h.ws.sync(fs, h.c))
}

// Release closes the handle.
func (fs *FS) Release(_ <-chan struct{}, in *fuse.ReleaseIn) {
	defer fs.track.begin("release", in.NodeId)()
	fs.release(in.Fh)
}

// release closes file fh: a commit that fails here has nobody to tell
// (close(2) returned at the flush), so it is logged; the last close of a
// file unlinked while open removes it.
func (fs *FS) release(fh uint64) {
	h, lastWriter, hidden := fs.handles.removeFile(fh)
	if h == nil {
		return
	}
	if r := h.reader.Swap(nil); r != nil {
		r.Close()
	}
	if h.ws != nil {
		if e := h.ws.commit(fs, h.c); e != 0 {
			fs.opt.Log.Error("a file closed without its last writes", "path", h.path, "errno", e.Error())
		}
		if lastWriter {
			h.ws.close()
		}
	}
	if hidden != "" {
		if _, err := h.c.Delete(fs.ctx, fs.uri(hidden), false); err != nil {
			fs.opt.Log.Error("an unlinked file outlived its last close", "path", hidden, "err", err)
		}
	}
}
