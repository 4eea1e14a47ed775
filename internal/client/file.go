package client

import (
	"bytes"
	"context"
	"io"

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
	c      *Client
	ctx    context.Context
	hdr    *pb.Header
	path   string
	ino    uint64
	limit  int
	buf    bytes.Buffer
	closed bool
}

// Create creates path for writing and takes its lease.
func (c *Client) Create(ctx context.Context, path string, o CreateOptions) (*Writer, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	if o.Perm == 0 {
		o.Perm = 0o666
	}
	hdr := c.hdr(ns)
	r, err := call(func() (*pb.CreateResponse, error) {
		return c.meta.Create(ctx, &pb.CreateRequest{Header: hdr, Path: p, Permission: o.Perm, Umask: c.umask,
			Overwrite: o.Overwrite, CreateParents: !o.NonRecursive, Replication: o.Replication, BlockSize: o.BlockSize})
	})
	if err != nil {
		return nil, err
	}
	c.startWriter()
	return &Writer{c: c, ctx: ctx, hdr: hdr, path: p, ino: r.Status.InodeId, limit: int(r.InlineLimit)}, nil
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, fserr.Errorf(fserr.ErrInvalidArgument, "write %s: file already closed", w.path)
	}
	if w.buf.Len()+len(p) > w.limit {
		return 0, fserr.Errorf(fserr.ErrUnsupported,
			"write %s: files over %d bytes need the data path (workers), which this build does not have yet", w.path, w.limit)
	}
	return w.buf.Write(p)
}

// Close commits the content and releases the lease.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	defer w.c.endWriter()
	data := w.buf.Bytes()
	_, err := call(func() (*pb.CompleteResponse, error) {
		return w.c.meta.Complete(w.ctx, &pb.CompleteRequest{Header: w.hdr, Path: w.path, InodeId: w.ino,
			Length: uint64(len(data)), InlineData: data, Inline: len(data) > 0})
	})
	return err
}

// Reader reads a file. It implements io.Reader, io.ReaderAt and io.Seeker.
type Reader struct {
	*bytes.Reader
	Status *FileStatus
}

// Close implements io.Closer.
func (r *Reader) Close() error { return nil }

// Open opens path for reading.
func (c *Client) Open(ctx context.Context, path string) (*Reader, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	r, err := call(func() (*pb.OpenResponse, error) {
		return c.meta.Open(ctx, &pb.OpenRequest{Header: c.hdr(ns), Path: p})
	})
	if err != nil {
		return nil, err
	}
	if len(r.Blocks) > 0 {
		return nil, fserr.Errorf(fserr.ErrUnsupported, "open %s: the file is stored in blocks, which this build cannot read yet", p)
	}
	return &Reader{Reader: bytes.NewReader(r.InlineData), Status: statusFromProto(parentOf(p), r.Status)}, nil
}

// WriteFile creates (or overwrites) path with data.
func (c *Client) WriteFile(ctx context.Context, path string, data []byte, o CreateOptions) error {
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
