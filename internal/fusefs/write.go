package fusefs

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// writeState is what this mount's writers of one node wrote, shared by
// every handle open for writing on it. Under mu it is in one of three
// states: nothing written since the last commit; a stream (a
// client.Writer) while the writes come in order, each where the last
// ended, which is how files are written through the workers at full
// speed; a stage (stage.go) once a write lands anywhere else, or the file
// is cut, extended or read back: kept on local disk and committed whole.
type writeState struct {
	node    uint64
	path    string       // the node's at the first open
	refs    int          // handles sharing it (handleTable's lock)
	written atomic.Int64 // the length written here; -1: nothing uncommitted
	mu      struct {
		sync.Mutex
		stream *client.Writer
		stage  *stage
		reader *client.Reader // of the committed file, for reads back
		err    error          // a failed commit nobody was told of yet
	}
}

func newWriteState(node uint64, path string) *writeState {
	ws := &writeState{node: node, path: path}
	ws.written.Store(-1)
	return ws
}

// maxHole is the largest gap a stream fills with zeros to reach a write
// past its end (a hole, as a seek past the end makes); a write further
// away goes to a stage instead.
const maxHole = 64 << 20

// Create creates a file and opens its stream: the file exists, empty,
// from now on, and its content becomes visible whole at close.
func (fs *FS) Create(_ <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	defer fs.track.begin("create", in.NodeId)()
	c, p, e := fs.callerChild(&in.InHeader, name, true)
	if e != 0 {
		return status(e)
	}
	o := client.CreateOptions{Perm: in.Mode & 0o7777, NonRecursive: true}
	var w *client.Writer
	var err error
	if in.Flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		err = c.WriteFile(fs.ctx, fs.uri(p), nil, o) // nothing will be written: closed at once
	} else {
		w, err = c.Create(fs.ctx, fs.uri(p), o)
	}
	if errors.Is(err, fserr.ErrExists) && in.Flags&syscall.O_EXCL == 0 {
		return fs.createExisting(c, in, name, p, out)
	}
	if err != nil {
		return status(errnoOf(err))
	}
	st := fs.createdStatus(c, in.NodeId, name, w, o.Perm)
	if st == nil {
		var e syscall.Errno
		if st, e = fs.stat(c, p); e != 0 {
			if w != nil {
				w.Close()
			}
			return status(e)
		}
	}
	fs.entry(in.NodeId, name, st, &out.EntryOut)
	h := &handle{node: out.NodeId, path: p, c: c}
	if w == nil {
		r, err := c.Open(fs.ctx, fs.uri(p))
		if err != nil {
			return status(errnoOf(err))
		}
		h.reader.Store(r)
		out.Fh = fs.handles.addFile(h, false)
		return fuse.OK
	}
	out.Fh = fs.handles.addFile(h, true)
	h.ws.adoptStream(w)
	return fuse.OK
}

// createdStatus is the status of the file w just created as name in
// directory parent, made here rather than asked for (a create is one call
// of the service, not two): its owner is the caller as the service knows
// it, its group its directory's (HDFS's rule, which the service applies),
// known when the directory was looked at here. Nil when either is not
// known.
func (fs *FS) createdStatus(c *client.Client, parent uint64, name string, w *client.Writer, perm uint32) *client.FileStatus {
	if w == nil {
		return nil
	}
	who, group := fs.whoami(c), fs.nodes.group(parent)
	if who == nil || group == "" {
		return nil
	}
	now := time.Now()
	return &client.FileStatus{Name: name, Perm: perm, Owner: who.User, Group: group, ModTime: now, AccTime: now,
		InodeID: w.Inode(), UnderConstruction: true}
}

// createExisting opens a file that a create without O_EXCL found there
// (made meanwhile by someone else), as open(2) does.
func (fs *FS) createExisting(c *client.Client, in *fuse.CreateIn, name, p string, out *fuse.CreateOut) fuse.Status {
	st, e := fs.stat(c, p)
	if e != 0 {
		return status(e)
	}
	fs.entry(in.NodeId, name, st, &out.EntryOut)
	oo := fuse.OpenIn{InHeader: in.InHeader, Flags: in.Flags}
	oo.NodeId = out.NodeId
	var open fuse.OpenOut
	if s := fs.Open(nil, &oo, &open); !s.Ok() {
		fs.nodes.forget(out.NodeId, 1)
		return s
	}
	out.Fh, out.OpenFlags = open.Fh, open.OpenFlags
	return fuse.OK
}

// adoptStream takes a new file's writer, when nothing else is open.
func (ws *writeState) adoptStream(w *client.Writer) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.mu.stream != nil || ws.mu.stage != nil {
		w.Close()
		return
	}
	ws.mu.stream = w
	ws.written.Store(0)
}

// curPath is the path of the node now (it may have been renamed since
// the open), else the path it was opened with.
func (ws *writeState) curPath(fs *FS) string {
	if p, ok := fs.nodes.path(ws.node); ok {
		return p
	}
	return ws.path
}

// write writes data at off: to the stream while writes follow each
// other, else to a stage.
func (ws *writeState) write(fs *FS, c *client.Client, data []byte, off int64) syscall.Errno {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.mu.stage == nil && ws.mu.stream != nil {
		end := int64(ws.mu.stream.Size())
		if off > end && off-end <= maxHole {
			if e := ws.streamWrite(make([]byte, off-end)); e != 0 {
				return e
			}
			end = off
		}
		if off == end {
			return ws.streamWrite(data)
		}
		if e := ws.commitLocked(fs, c); e != 0 {
			return e
		}
	}
	if ws.mu.stage == nil {
		if e := ws.startWriting(fs, c, off); e != 0 {
			return e
		}
		if ws.mu.stream != nil {
			return ws.streamWrite(data)
		}
	}
	if e := ws.mu.stage.write(data, off); e != 0 {
		return e
	}
	ws.written.Store(ws.mu.stage.size)
	return 0
}

func (ws *writeState) streamWrite(data []byte) syscall.Errno {
	if _, err := ws.mu.stream.Write(data); err != nil {
		ws.mu.stream.Close() // removes a file it created, keeps an appended one
		ws.mu.stream = nil
		ws.written.Store(-1)
		return errnoOf(err)
	}
	ws.written.Store(int64(ws.mu.stream.Size()))
	return 0
}

// startWriting opens the file for a write at off: a stream appending to
// it when off is its end (block mode), else a stage of it.
func (ws *writeState) startWriting(fs *FS, c *client.Client, off int64) syscall.Errno {
	p := ws.curPath(fs)
	st, e := fs.stat(c, p)
	if e != 0 {
		return e
	}
	if off == int64(st.Length) {
		w, err := c.Append(fs.ctx, fs.uri(p))
		if err == nil {
			ws.mu.stream = w
			return 0
		}
		if errnoOf(err) != syscall.EOPNOTSUPP {
			return errnoOf(err)
		}
	}
	return ws.startStage(fs, c, p, st)
}

func (ws *writeState) startStage(fs *FS, c *client.Client, p string, st *client.FileStatus) syscall.Errno {
	s, e := fs.newStage(c, p, st)
	if e != 0 {
		return e
	}
	ws.mu.stage = s
	return 0
}

// commit makes what was written the file's content, and reports a commit
// that failed before (at a release nobody could be told of).
func (ws *writeState) commit(fs *FS, c *client.Client) syscall.Errno {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.commitLocked(fs, c)
}

func (ws *writeState) commitLocked(fs *FS, c *client.Client) syscall.Errno {
	var err error
	switch {
	case ws.mu.stream != nil:
		err = ws.mu.stream.Close()
		ws.mu.stream = nil
		fs.attrChanged(ws.node)
	case ws.mu.stage != nil:
		err = ws.mu.stage.commit(fs, c, ws.curPath(fs))
		ws.mu.stage.close()
		ws.mu.stage = nil
		fs.attrChanged(ws.node)
	}
	ws.written.Store(-1)
	ws.dropReaderLocked()
	if err != nil {
		ws.mu.err = err
	}
	e := errnoOf(ws.mu.err)
	ws.mu.err = nil
	return e
}

func (ws *writeState) dropReaderLocked() {
	if ws.mu.reader != nil {
		ws.mu.reader.Close() // of the content before
		ws.mu.reader = nil
	}
}

// sync makes the writes durable: hsync of a stream, or a commit where the
// namespace has none (cache mode) and of a stage.
func (ws *writeState) sync(fs *FS, c *client.Client) syscall.Errno {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.mu.stream != nil {
		err := ws.mu.stream.Sync()
		if errnoOf(err) != syscall.EOPNOTSUPP {
			return errnoOf(err)
		}
	}
	return ws.commitLocked(fs, c)
}

// readAt reads what the writers see: the stage, or the file as committed
// (a stream is committed first: its bytes are in flight to the workers,
// not readable until then).
func (ws *writeState) readAt(fs *FS, c *client.Client, buf []byte, off int64) (int, syscall.Errno) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.mu.stream != nil {
		if e := ws.commitLocked(fs, c); e != 0 {
			return 0, e
		}
	}
	if ws.mu.stage != nil {
		n, err := ws.mu.stage.readAt(buf, off)
		return n, errnoOf(err)
	}
	if ws.mu.reader == nil {
		r, err := c.Open(fs.ctx, fs.uri(ws.curPath(fs)))
		if err != nil {
			return 0, errnoOf(err)
		}
		ws.mu.reader = r
	}
	n, err := ws.mu.reader.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, errnoOf(err)
	}
	return n, 0
}

// truncate cuts or extends the file to size, staged: committed with the
// rest at flush. A stream already that long, or a file that is, is left
// as it is.
func (ws *writeState) truncate(fs *FS, c *client.Client, size int64) syscall.Errno {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.mu.stream != nil && int64(ws.mu.stream.Size()) == size {
		return 0
	}
	if ws.mu.stage == nil {
		if e := ws.commitLocked(fs, c); e != 0 {
			return e
		}
		p := ws.curPath(fs)
		st, e := fs.stat(c, p)
		if e != 0 || int64(st.Length) == size {
			return e
		}
		if e := ws.startStage(fs, c, p, st); e != 0 {
			return e
		}
	}
	ws.mu.stage.truncate(size)
	ws.written.Store(size)
	return 0
}

// close drops what the last handle left: a stage is committed by then.
func (ws *writeState) close() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.mu.stage != nil {
		ws.mu.stage.close()
		ws.mu.stage = nil
	}
	ws.dropReaderLocked()
}
