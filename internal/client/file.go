package client

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"time"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// CreateOptions are the arguments of Create.
type CreateOptions struct {
	Perm         uint32 // default 0o666, masked by the umask
	Overwrite    bool
	NonRecursive bool   // the parent must exist (createNonRecursive)
	Replication  uint32 // 0: the service's default
	BlockSize    uint64 // 0: the service's default
}

// Writer writes a new file, or appends to one. The file exists from Create
// (or Append) on; its content becomes visible, whole, on Close, or as far
// as written on Flush and Sync. It is not safe for concurrent use.
type Writer struct {
	c         *Client
	ctx       context.Context
	hdr       *pb.Header
	path      string
	ino       uint64
	limit     int
	storeURI  string
	token     blockToken
	objectKey string // cache mode: the object the content goes to, whole
	blockSize uint64
	// base is the offset of the writer's first byte: 0, or where an
	// append's first block starts; off is the offset of the next byte.
	base, off uint64
	// visible is the file's length the service last stated: where the
	// next flush's tail starts.
	visible uint64
	buf     bytes.Buffer // the content while it fits inline
	bl      *blockSet    // block mode: the blocks once it does not
	obj     *blockStream // cache mode: the object's stream once it does not
	// appended: the file existed before this writer, so a failed write
	// never removes it (even an empty one, whose base and visible are 0);
	// nor once a flush was sent, which may have committed.
	appended  bool
	flushSent bool
	// unsynced: a Flush (hflush) since the last Sync made what it sent
	// lasting, not durable: a Sync with nothing new still asks.
	unsynced bool
	closed   bool
	failed   error
}

// Create creates path for writing and takes its lease.
func (c *Client) Create(ctx context.Context, path string, o CreateOptions) (*Writer, error) {
	ctx = traced(ctx)
	ns, p, err := splitNewPath(path)
	if err != nil {
		return nil, err
	}
	hdr := c.hdr(ns)
	r, err := c.create(ctx, c.createRequest(hdr, p, o))
	if err != nil {
		return nil, err
	}
	c.startWriter()
	w := &Writer{c: c, ctx: ctx, hdr: hdr, path: p, ino: r.Status.InodeId, limit: int(r.InlineLimit),
		storeURI: r.StoreUri, objectKey: r.ObjectKey, blockSize: r.Status.BlockSize}
	w.token.set(r.BlockToken, r.BlockTokenExpires)
	return w, nil
}

// Append opens closed file path for writing at its end and takes its
// lease; what is written goes after what the file holds, visible on Close
// (or Flush). A cache-mode file cannot be appended to.
func (c *Client) Append(ctx context.Context, path string) (*Writer, error) {
	ctx = traced(ctx)
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	hdr := c.hdr(ns)
	r, err := call(func() (*pb.AppendResponse, error) {
		return c.meta.Append(ctx, &pb.AppendRequest{Header: hdr, Path: p})
	})
	if err != nil {
		return nil, err
	}
	c.startWriter()
	length := r.Status.Length
	w := &Writer{c: c, ctx: ctx, hdr: hdr, path: p, ino: r.Status.InodeId, limit: int(r.InlineLimit),
		storeURI: r.StoreUri, blockSize: r.Status.BlockSize, visible: length, appended: true}
	w.token.set(r.BlockToken, r.BlockTokenExpires)
	// A file that was stored inline: its bytes start the writer's content
	// again, to end up in its first block (or inline once more).
	w.base = length - uint64(len(r.InlineData))
	w.off = w.base
	w.buf.Write(r.InlineData)
	if len(r.InlineData) > 0 {
		w.off = length
	}
	return w, nil
}

func (c *Client) createRequest(hdr *pb.Header, p string, o CreateOptions) *pb.CreateRequest {
	return &pb.CreateRequest{Header: hdr, Path: p, Permission: cmp.Or(o.Perm, 0o666), Umask: c.umask,
		Overwrite: o.Overwrite, CreateParents: !o.NonRecursive, Replication: o.Replication, BlockSize: o.BlockSize}
}

// create sends r and learns the service's inline limit from the answer.
func (c *Client) create(ctx context.Context, r *pb.CreateRequest) (*pb.CreateResponse, error) {
	resp, err := call(func() (*pb.CreateResponse, error) { return c.meta.Create(ctx, r) })
	if err == nil {
		c.inlineLimit.Store(int64(resp.InlineLimit))
	}
	return resp, err
}

// Write implements io.Writer. Content up to the inline limit is buffered;
// past it, everything streams to workers.
func (w *Writer) Write(p []byte) (int, error) {
	switch {
	case w.closed:
		return 0, fserr.Errorf(fserr.ErrInvalidArgument, "write %s: file already closed", w.path)
	case w.failed != nil:
		return 0, w.failed
	case w.bl == nil && w.obj == nil && w.buf.Len()+len(p) <= w.limit:
		w.off += uint64(len(p))
		return w.buf.Write(p)
	}
	if err := w.stream(p); err != nil {
		w.failed = fserr.Errorf(errCond(err), "write %s: %v", w.path, err)
		return 0, w.failed
	}
	return len(p), nil
}

// stream sends p to workers, beginning with what was buffered.
func (w *Writer) stream(p []byte) error {
	if w.objectKey != "" {
		if w.obj == nil {
			s, err := w.openStream()
			if err != nil {
				return err
			}
			w.obj = s
			if err := s.write(w.buf.Bytes()); err != nil {
				return err
			}
		}
		w.off += uint64(len(p))
		return w.obj.write(p)
	}
	if w.bl == nil {
		w.bl = newBlockSet()
		buffered := w.buf.Bytes()
		w.off = w.base
		if err := w.streamBlocks(buffered); err != nil {
			return err
		}
	}
	return w.streamBlocks(p)
}

// Flush makes what was written so far visible to every reader that opens
// the file afterwards (HDFS's hflush), and lasting: once it returns, it
// survives the kill of any process, the writer's, a worker's or a member's
// of the service (it is in their logs), but not a power cut of the
// service's machines, as HDFS's hflush does not (docs/datapath.md).
func (w *Writer) Flush() error { return w.flush(false) }

// Sync is Flush, durable (HDFS's hsync): the service syncs its log on a
// quorum of members before it answers.
func (w *Writer) Sync() error { return w.flush(true) }

func (w *Writer) flush(sync bool) error {
	switch {
	case w.closed:
		return fserr.Errorf(fserr.ErrInvalidArgument, "flush %s: file already closed", w.path)
	case w.failed != nil:
		return w.failed
	case w.objectKey != "":
		return fserr.Errorf(fserr.ErrUnsupported, "flush %s: a file of a cache-mode namespace is visible once closed only (it is one object in the bucket)", w.path)
	}
	req := &pb.FlushRequest{Header: w.hdr, Path: w.path, InodeId: w.ino, Sync: sync}
	if err := w.flushContent(req); err != nil {
		w.failed = fserr.Errorf(errCond(err), "flush %s: %v", w.path, err)
		return w.failed
	}
	if len(req.Blocks) == 0 && len(req.TailData) == 0 && !(sync && w.unsynced) {
		return nil
	}
	w.flushSent = true
	resp, err := call(func() (*pb.FlushResponse, error) { return w.c.meta.Flush(w.ctx, req) })
	if err != nil {
		// The blocks it carried are no longer the writer's to send again:
		// the write fails, and lease recovery keeps what did commit.
		w.failed = fserr.Errorf(errCond(err), "flush %s: %v", w.path, err)
		return w.failed
	}
	w.visible, w.unsynced = resp.Length, !sync
	w.token.set(resp.BlockToken, resp.BlockTokenExpires)
	if w.bl != nil {
		w.bl.committed(resp.Length)
	}
	return nil
}

// flushContent fills req with what to commit: the blocks finished since the
// last flush and the bytes written after them and after the last flush.
func (w *Writer) flushContent(req *pb.FlushRequest) error {
	if w.bl == nil {
		data := w.buf.Bytes()
		req.TailOffset, req.TailData = w.visible, data[w.visible-w.base:]
		return nil
	}
	bs := w.bl
	if !bs.flushed || bs.overflow {
		// The first flush, or too much for a tail: end the current block
		// early, so that blocks hold everything written so far; from the
		// first flush on the current block's bytes are kept, to be sent
		// as the tail.
		w.endBlock()
		bs.flushed = true
	}
	done, err := w.finished()
	if err != nil {
		return err
	}
	req.Blocks = done
	end := w.visible
	if len(done) > 0 {
		end = max(end, done[len(done)-1].Offset+done[len(done)-1].Length)
	}
	if bs.cur != nil && end < w.off {
		req.TailOffset, req.TailData = end, bs.keep[end-bs.keepStart:]
	}
	return nil
}

// Close commits the content and releases the lease. If the write failed,
// the file is deleted (a new file; an appended one keeps what it had): a
// partial file is never left visible.
func (w *Writer) Close() error {
	if w.closed {
		return w.failed
	}
	w.closed = true
	defer w.c.endWriter()
	req := &pb.CompleteRequest{Header: w.hdr, Path: w.path, InodeId: w.ino, Length: w.off}
	if w.failed == nil {
		if err := w.completeContent(req); err != nil {
			w.failed = fserr.Errorf(errCond(err), "write %s: %v", w.path, err)
		}
	}
	if w.failed != nil {
		w.abandon()
		return w.failed
	}
	_, err := call(func() (*pb.CompleteResponse, error) { return w.c.meta.Complete(w.ctx, req) })
	return err
}

// Abort gives the write up as a failed one, for a writer whose caller is
// gone (the Python package's agent aborts the writers of a process that
// exited): nothing more is committed, a new file never flushed is removed,
// an appended or flushed one is left to lease recovery. After Close it does
// nothing.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	if w.failed == nil {
		w.failed = fserr.Errorf(fserr.ErrInvalidArgument, "write %s: aborted", w.path)
	}
	_ = w.Close()
}

// completeContent fills req with the content to commit: inline, or the
// blocks not committed by a flush (none in cache mode, whose object the
// worker completed).
func (w *Writer) completeContent(req *pb.CompleteRequest) error {
	switch {
	case w.obj != nil:
		_, err := w.obj.finish()
		return err
	case w.bl == nil && w.objectKey == "" && w.base > 0:
		// Appended to a file of blocks: what was written becomes a block,
		// however small (inline content cannot follow blocks).
		if err := w.stream(nil); err != nil {
			return err
		}
		return w.completeContent(req)
	case w.bl == nil:
		data := w.buf.Bytes()
		req.InlineData, req.Inline = data, len(data) > 0
		return nil
	}
	w.endBlock()
	done, err := w.finished()
	req.Blocks = done
	return err
}

// abandonTimeout bounds the removal of a failed write's file: the caller
// waits for it to hear of the failure, and when the service is what failed
// the file is left to lease recovery rather than waited for through a whole
// failover budget.
const abandonTimeout = 5 * time.Second

// abandon removes the file of a failed write; what the worker uploaded is
// collected once the deletion commits. An appended file is left to lease
// recovery, which closes it with what it had and what was flushed.
func (w *Writer) abandon() {
	w.cancelBlocks()
	if w.obj != nil {
		w.obj.cancel()
	}
	if w.visible > 0 || w.appended || w.flushSent {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), abandonTimeout)
	defer cancel()
	_, _ = w.c.meta.Delete(ctx, &pb.DeleteRequest{Header: w.hdr, Path: w.path, InodeId: w.ino})
}

// errCond returns err's condition; an error without one is a transport
// failure.
func errCond(err error) error {
	var fe *fserr.Error
	if errors.As(err, &fe) {
		return fe.Cond
	}
	return fserr.ErrUnavailable
}

// WriteFile creates (or overwrites) path with data. An empty file, or one
// that fits the inline limit the service stated last, takes one call: a
// create of the file complete, which holds no lease. Larger content streams
// through a Writer.
func (c *Client) WriteFile(ctx context.Context, path string, data []byte, o CreateOptions) error {
	if len(data) == 0 || int64(len(data)) <= c.inlineLimit.Load() {
		ns, p, err := splitNewPath(path)
		if err != nil {
			return err
		}
		r := c.createRequest(c.hdr(ns), p, o)
		r.Complete, r.InlineData = true, data
		_, err = c.create(ctx, r)
		if len(data) == 0 || !errors.Is(err, fserr.ErrInvalidArgument) {
			return err
		}
		// The service's limit went down since it was stated: stream.
	}
	w, err := c.Create(ctx, path, o)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// ReadFile returns the content of path.
func (c *Client) ReadFile(ctx context.Context, path string) ([]byte, error) {
	r, err := c.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
