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

// Writer writes a new file. The file exists, empty, from Create on; its
// content becomes visible, whole, on Close. It is not safe for concurrent
// use.
type Writer struct {
	c         *Client
	ctx       context.Context
	hdr       *pb.Header
	path      string
	ino       uint64
	limit     int
	storeURI  string
	blockSize uint64
	buf       bytes.Buffer // the content while it fits inline
	bs        *blockStream // the stream to a worker once it does not
	closed    bool
	failed    error
}

// Create creates path for writing and takes its lease.
func (c *Client) Create(ctx context.Context, path string, o CreateOptions) (*Writer, error) {
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
	return &Writer{c: c, ctx: ctx, hdr: hdr, path: p, ino: r.Status.InodeId, limit: int(r.InlineLimit),
		storeURI: r.StoreUri, blockSize: r.Status.BlockSize}, nil
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
// past it, everything streams to a worker.
func (w *Writer) Write(p []byte) (int, error) {
	switch {
	case w.closed:
		return 0, fserr.Errorf(fserr.ErrInvalidArgument, "write %s: file already closed", w.path)
	case w.failed != nil:
		return 0, w.failed
	case w.bs == nil && w.buf.Len()+len(p) <= w.limit:
		return w.buf.Write(p)
	}
	var err error
	if w.bs == nil {
		err = w.openStream()
	}
	if err == nil {
		err = w.bs.write(p)
	}
	if err != nil {
		w.failed = fserr.Errorf(errCond(err), "write %s: %v", w.path, err)
		return 0, w.failed
	}
	return len(p), nil
}

// Close commits the content and releases the lease. If the write failed,
// the file is deleted: a partial file is never left visible.
func (w *Writer) Close() error {
	if w.closed {
		return w.failed
	}
	w.closed = true
	defer w.c.endWriter()
	req := &pb.CompleteRequest{Header: w.hdr, Path: w.path, InodeId: w.ino}
	if w.bs == nil {
		data := w.buf.Bytes()
		req.Length, req.InlineData, req.Inline = uint64(len(data)), data, len(data) > 0
	} else if w.failed == nil {
		resp, err := w.bs.finish()
		if err != nil {
			w.failed = fserr.Errorf(errCond(err), "write %s: %v", w.path, err)
		} else {
			req.Length, req.Blocks = resp.Length, resp.Blocks
		}
	}
	if w.failed != nil {
		w.abandon()
		return w.failed
	}
	_, err := call(func() (*pb.CompleteResponse, error) { return w.c.meta.Complete(w.ctx, req) })
	return err
}

// abandonTimeout bounds the removal of a failed write's file: the caller
// waits for it to hear of the failure, and when the service is what failed
// the file is left to lease recovery rather than waited for through a whole
// failover budget.
const abandonTimeout = 5 * time.Second

// abandon removes the file of a failed write; what the worker uploaded is
// collected once the deletion commits.
func (w *Writer) abandon() {
	if w.bs != nil {
		w.bs.cancel()
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
