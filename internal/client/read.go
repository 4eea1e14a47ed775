package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/trace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// readBuffer is how much a sequential Read fetches at a time.
const readBuffer = 4 << 20

// directRead is the least Read that goes to the worker (or the cache file)
// straight into the caller's buffer: a short-circuit lease makes a read of
// a page or more as cheap as a pread, and skipping the read-ahead buffer
// saves a copy.
const directRead = 1 << 20

// Reader reads a file. It implements io.Reader, io.ReaderAt and io.Seeker;
// ReadAt may be called concurrently, Read and Seek may not.
type Reader struct {
	Status   *FileStatus
	c        *Client
	ctx      context.Context
	inline   []byte
	blocks   []*pb.Block
	storeURI string
	ns       string // the namespace, as the path names it
	token    *blockToken
	size     int64
	path     string // as the caller named it
	// Cache mode: the blocks are ranges of this object, of this version.
	objectKey, version string
	started            bool // Read returned bytes
	// tailStart is where the blocks end: a file being written that was
	// flushed has its bytes from there to size in the service (ReadTail).
	tailStart int64

	off    int64  // position of Read
	buf    []byte // read-ahead of Read, starting at bufOff
	bufOff int64
	warmed int // the last block Read had its worker start fetching
}

// Open opens path for reading.
func (c *Client) Open(ctx context.Context, path string) (*Reader, error) {
	return c.openPath(ctx, path, false)
}

// openPath opens file path: to load and drop its blocks if cacheAdmin
// (a superuser's), else to read them.
func (c *Client) openPath(ctx context.Context, path string, cacheAdmin bool) (*Reader, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	return c.open(ctx, &pb.OpenRequest{Header: c.hdr(ns), Path: p, CacheAdmin: cacheAdmin}, path)
}

func (c *Client) open(ctx context.Context, req *pb.OpenRequest, name string) (*Reader, error) {
	ctx = traced(ctx)
	r, err := call(func() (*pb.OpenResponse, error) { return c.meta.Open(ctx, req) })
	if err != nil {
		return nil, err
	}
	rd := &Reader{Status: statusFromProto(fspath.NewJoiner(path.Dir(req.Path)), r.Status), c: c, ctx: ctx, inline: r.InlineData,
		blocks: r.Blocks, storeURI: r.StoreUri, size: int64(r.Status.Length), path: name, objectKey: r.ObjectKey,
		version: r.ObjectVersion}
	rd.ns = req.GetHeader().GetNamespace()
	rd.token = &blockToken{}
	rd.token.setWith(r.BlockToken, r.BlockTokenExpires, r.ObjectTokens)
	rd.tailStart = rd.size
	if !r.Inline && r.ObjectKey == "" {
		rd.tailStart = 0
		if k := len(r.Blocks); k > 0 {
			rd.tailStart = int64(r.Blocks[k-1].Offset + r.Blocks[k-1].Length)
		}
	}
	return rd, nil
}

// readTail reads p at off from the file's flushed tail, in the service.
func (r *Reader) readTail(p []byte, off int64) error {
	ns, path, err := splitPath(r.path)
	if err != nil {
		return err
	}
	for len(p) > 0 {
		resp, err := call(func() (*pb.ReadTailResponse, error) {
			return r.c.meta.ReadTail(r.ctx, &pb.ReadTailRequest{Header: r.c.hdr(ns), Path: path,
				InodeId: r.Status.InodeID, Offset: uint64(off), Length: uint64(len(p))})
		})
		if err != nil {
			return err
		}
		if len(resp.Data) == 0 {
			return r.readTakenOver(p, off)
		}
		n := copy(p, resp.Data)
		p, off = p[n:], off+int64(n)
	}
	return nil
}

// readTakenOver reads p at off, bytes this reader took for the tail that a
// block holds now (a flush or the close came after its open; the service
// answers nothing for them): from the file's blocks as they are now, the
// same inode's (blocks never change).
func (r *Reader) readTakenOver(p []byte, off int64) error {
	ns, path, err := splitPath(r.path)
	if err != nil {
		return err
	}
	again, err := r.c.open(r.ctx, &pb.OpenRequest{Header: r.c.hdr(ns), Path: path}, r.path)
	if err != nil {
		return err
	}
	if again.Status.InodeID == r.Status.InodeID && off < again.tailStart {
		if n, err := again.ReadAt(p, off); n == len(p) {
			return nil
		} else if !errors.Is(err, io.EOF) {
			return err
		}
	}
	return fserr.Errorf(fserr.ErrNotFound, "read %s: the file's flushed bytes at %d are gone (it was replaced or cut meanwhile): open it again", r.path, off)
}

// blockRef names block b for a worker, with the file's block access token.
func (r *Reader) blockRef(b *pb.Block) *pb.BlockRef {
	if r.token.due() {
		r.renewToken()
	}
	ref := &pb.BlockRef{StoreUri: r.storeURI, InodeId: r.Status.InodeID, BlockId: b.BlockId, Length: b.Length,
		Namespace: r.ns, BlockToken: r.token.get()}
	if b.ObjectInode != 0 { // a block a concat moved: its object is under its first file's inode
		ref.InodeId, ref.BlockToken = b.ObjectInode, r.token.object(b.ObjectInode)
	}
	if r.objectKey != "" {
		ref.ObjectKey, ref.ObjectOffset, ref.Version = r.objectKey, b.Offset, r.version
	}
	return ref
}

// renewToken opens the file again for a new block access token, if it is
// still the same file. A failure leaves the old token, which the worker
// refuses once it expired, saying so.
func (r *Reader) renewToken() {
	r.token.renew.Lock()
	defer r.token.renew.Unlock()
	if !r.token.due() {
		return
	}
	ns, path, err := splitPath(r.path)
	if err != nil {
		return
	}
	resp, err := call(func() (*pb.OpenResponse, error) {
		return r.c.meta.Open(r.ctx, &pb.OpenRequest{Header: r.c.hdr(ns), Path: path})
	})
	if err == nil && resp.GetStatus().GetInodeId() == r.Status.InodeID {
		r.token.setWith(resp.BlockToken, resp.BlockTokenExpires, resp.ObjectTokens)
	}
}

// Size returns the file's length.
func (r *Reader) Size() int64 { return r.size }

// Close implements io.Closer.
func (r *Reader) Close() error { r.buf = nil; return nil }

// Read implements io.Reader, reading ahead in large aligned chunks so that
// small reads do not each cost a request.
//
// In a cache-mode namespace, a file whose object changed in the bucket
// since the namespace last checked it (by its sync interval) is opened
// again, checked against the bucket, if nothing of it was read yet; a
// change after that fails the read with ErrChanged, rather than mix two
// versions.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.read(p)
	if errors.Is(err, fserr.ErrChanged) && !r.started && r.objectKey != "" {
		if err := r.reopen(); err != nil {
			return 0, err
		}
		n, err = r.read(p)
	}
	r.started = r.started || n > 0
	return n, err
}

// reopen opens the file again, checked against the bucket first.
func (r *Reader) reopen() error {
	ns, p, err := splitPath(r.path)
	if err != nil {
		return err
	}
	again, err := r.c.open(r.ctx, &pb.OpenRequest{Header: r.c.hdr(ns), Path: p, Refresh: true}, r.path)
	if err != nil {
		return err
	}
	*r = *again
	return nil
}

func (r *Reader) read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.off < r.bufOff || r.off >= r.bufOff+int64(len(r.buf)) {
		r.warmNext()
		if len(p) >= directRead {
			n, err := r.readAt(p, r.off, false)
			r.off += int64(n)
			if errors.Is(err, io.EOF) && n > 0 {
				err = nil
			}
			return n, err
		}
		start := r.off - r.off%readBuffer
		n := min(int64(readBuffer), r.size-start)
		if cap(r.buf) < readBuffer {
			r.buf = make([]byte, readBuffer)
		}
		r.buf = r.buf[:n]
		if _, err := r.readAt(r.buf, start, false); err != nil && !errors.Is(err, io.EOF) {
			r.buf = r.buf[:0]
			return 0, err
		}
		r.bufOff = start
	}
	n := copy(p, r.buf[r.off-r.bufOff:])
	r.off += int64(n)
	return n, nil
}

// warmAhead is how far before a block's end a sequential Read has the
// next block's worker start fetching it: about the worker's read-ahead, so
// that the bucket link goes from one block's fetches to the next's without
// waiting for a request that finds the next block cold (a request's
// latency and a first fetch, ~10 ms a block behind a 5 ms link).
const warmAhead = 16 << 20

// warmNext has the next block's home worker start fetching it (in the
// background) once Read is within warmAhead of its block's end. Only a
// worker on this host is asked, by a short-circuit lease of the block's
// start, which Read then uses; a remote worker would have to send bytes.
func (r *Reader) warmNext() {
	if len(r.blocks) < 2 {
		return
	}
	i := sort.Search(len(r.blocks), func(i int) bool { return int64(r.blocks[i].Offset+r.blocks[i].Length) > r.off })
	if i+1 >= len(r.blocks) || i+1 <= r.warmed || int64(r.blocks[i].Offset+r.blocks[i].Length)-r.off > warmAhead {
		return
	}
	r.warmed = i + 1
	b := r.blocks[i+1]
	ref := r.blockRef(b)
	go func() {
		list, err := r.c.workers.live(r.ctx, false)
		if err != nil {
			return
		}
		if ranked := rank(list, ref.InodeId, ref.BlockId); len(ranked) > 0 && r.c.workers.local(ranked[0]) {
			r.c.workers.scPool(r.c.workers.socket(ranked[0])).warm(ref, min(directRead, int64(b.Length)))
		}
	}()
}

// Seek implements io.Seeker.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	}
	if offset < 0 {
		return 0, fserr.Errorf(fserr.ErrInvalidArgument, "seek %s: negative position %d", r.Status.Path, offset)
	}
	r.off = offset
	return offset, nil
}

// ReadAt implements io.ReaderAt. Its reads are taken for random access
// (columnar formats read so): the workers fetch what they ask for and
// nothing ahead; Read's are sequential.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) { return r.readAt(p, off, true) }

// ReadAtAhead is ReadAt for a caller that reads the file in order, several
// pieces at once (the Python package's agent reads a sequential reader's
// next chunks so): its reads are taken for sequential, so the workers read
// on ahead as they do for Read's. Safe for concurrent use, as ReadAt.
func (r *Reader) ReadAtAhead(p []byte, off int64) (int, error) { return r.readAt(p, off, false) }

func (r *Reader) readAt(p []byte, off int64, random bool) (int, error) {
	if off < 0 {
		return 0, fserr.Errorf(fserr.ErrInvalidArgument, "read %s: negative offset", r.Status.Path)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := len(p)
	p = p[:min(int64(len(p)), r.size-off)]
	if r.inline != nil || len(r.blocks) == 0 && r.tailStart >= r.size {
		n := copy(p, r.inline[off:])
		return n, eofIf(n < want)
	}
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		if pos >= r.tailStart {
			if err := r.readTail(p[done:], pos); err != nil {
				return done, err
			}
			done = len(p)
			break
		}
		i := sort.Search(len(r.blocks), func(i int) bool { return int64(r.blocks[i].Offset+r.blocks[i].Length) > pos })
		b := r.blocks[i]
		in := pos - int64(b.Offset)
		n := min(int64(len(p)-done), int64(b.Length)-in)
		if err := r.readBlock(b, p[done:done+int(n)], in, random); err != nil {
			return done, err
		}
		done += int(n)
	}
	return done, eofIf(done < want)
}

func eofIf(short bool) error {
	if short {
		return io.EOF
	}
	return nil
}

// readBlock reads [off, off+len(p)) of block b from its home worker,
// short-circuit when that worker shares this host, falling back to the
// next workers in rendezvous order when one fails.
func (r *Reader) readBlock(b *pb.Block, p []byte, off int64, random bool) error {
	return r.onWorkers(b, "read", func(w *pb.WorkerInfo, ref *pb.BlockRef) error {
		return r.readFrom(w, ref, p, off, random)
	})
}

// onWorkers calls fn with block b's home worker, then the next workers in
// rendezvous order while fn fails without a worker's answer (the worker
// could not be reached), once more with a fresh list of workers. op names
// what fn does, in the error when no worker served.
func (r *Reader) onWorkers(b *pb.Block, op string, fn func(w *pb.WorkerInfo, ref *pb.BlockRef) error) error {
	ref := r.blockRef(b)
	var errs []error
	for attempt := range 2 {
		list, err := r.c.workers.live(r.ctx, attempt > 0)
		if err != nil {
			return err
		}
		for _, w := range rank(list, ref.InodeId, ref.BlockId) {
			err := fn(w, ref)
			if err == nil {
				return nil
			}
			if answered(err) {
				return err // the worker answered: the block itself is the problem
			}
			errs = append(errs, fmt.Errorf("worker %s at %s: %w", w.Id, w.Address, err))
		}
	}
	return fserr.Errorf(fserr.ErrUnavailable, "%s %s: no worker could serve block %016x: %s", op, r.Status.Path, b.BlockId, oneLine(errs))
}

func (r *Reader) readFrom(w *pb.WorkerInfo, ref *pb.BlockRef, p []byte, off int64, random bool) error {
	if r.c.workers.local(w) {
		err := shortCircuitRead(r.c.workers.scPool(r.c.workers.socket(w)), ref, p, off, random, trace.FromContext(r.ctx))
		if err == nil || answered(err) {
			return err // the RPC would wait on the same bucket as long
		}
		// Fall through to the worker's RPC, which reports the real error.
	}
	wc, err := r.c.workers.conn(w)
	if err != nil {
		return err
	}
	stream, err := wc.Read(r.ctx, &pb.ReadRequest{Block: ref, Offset: uint64(off), Length: uint64(len(p)), Random: random})
	if err != nil {
		return rpcerr.FromStatus(err)
	}
	got := 0
	for got < len(p) {
		msg, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("worker sent %d of %d bytes", got, len(p))
			}
			return rpcerr.FromStatus(err)
		}
		got += copy(p[got:], msg.Data)
	}
	return nil
}

// oneLine joins errs into one line, as a shell shows only an error's first.
func oneLine(errs []error) string {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return strings.Join(msgs, "; ")
}

// answered reports whether err is a worker's answer about the data (a
// missing block, a bad range, a bucket that did not answer the worker)
// rather than a failure to reach a worker. NB: a bucket that did not answer
// comes in the unavailable class, but asking the next worker would only
// wait as long on the same bucket.
func answered(err error) bool {
	var fe *fserr.Error
	return errors.As(err, &fe)
}
