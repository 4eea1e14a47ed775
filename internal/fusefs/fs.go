package fusefs

import (
	"context"
	"log/slog"
	"os"
	"path"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
)

// Options configure a mounted namespace.
type Options struct {
	// Namespace is the namespace mounted.
	Namespace string
	// Identity gives each request's client (identity.go).
	Identity Identity
	// EntryTimeout and AttrTimeout are how long the kernel may trust a
	// name it looked up and a file's attributes without asking again; a
	// change made through another mount is seen after them at most, and at
	// every open (close-to-open). NegativeTimeout is the same for a name
	// found missing. Zero: ask every time.
	EntryTimeout, AttrTimeout, NegativeTimeout time.Duration
	// StageDir is where random writes are staged (stage.go); StageLimit
	// bounds the bytes staged at once, past which a write fails ENOSPC.
	StageDir   string
	StageLimit int64
	// Journal, if set, is the file that keeps the node table for a
	// successor (journal.go).
	Journal string
	// ReadRetry is how long a read waits for a worker that can serve it
	// before it fails with EIO (0: 30s).
	ReadRetry time.Duration
	// HungAfter is how long a request may run before the log says so and
	// the metrics count it as hung (0: 30s).
	HungAfter time.Duration
	// Log receives the mount's events.
	Log *slog.Logger
}

// FS is a mounted namespace: go-fuse's raw file system, answering the
// kernel's requests by the client's calls. Safe for concurrent use: the
// kernel sends requests from many threads, and no lock is held across a
// call to the service (so many readers of one file never wait for each
// other).
type FS struct {
	fuse.RawFileSystem // ENOSYS for what is not implemented below
	opt                Options
	ctx                context.Context
	cancel             context.CancelFunc
	nodes              *nodeTable
	ids                *idMap
	handles            handleTable
	stages             *stageBudget
	track              *tracker
	journal            *journal
	who                sync.Map // *client.Client → *pb.WhoAmIResponse, asked once
	server             *fuse.Server
}

// Init keeps the server, to tell the kernel of changes it did not make
// itself (attrChanged).
func (fs *FS) Init(s *fuse.Server) { fs.server = s }

// attrChanged tells the kernel that a node's attributes changed under
// it: a commit gave the file a new length, times or inode, which a stat
// right after close(2) must show (make(1) compares mtimes), not the ones
// the kernel cached. NB: attributes only (offset -1): this takes no lock
// of the kernel's, so it is safe inside any request.
func (fs *FS) attrChanged(node uint64) {
	fs.nodes.changed(node)
	if fs.server != nil {
		fs.server.InodeNotify(node, -1, 0)
	}
}

// New returns the file system of opt.Namespace, with the node table its
// predecessor left in opt.Journal, if any.
func New(opt Options) (*FS, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opt.ReadRetry == 0 {
		opt.ReadRetry = 30 * time.Second
	}
	if opt.HungAfter == 0 {
		opt.HungAfter = 30 * time.Second
	}
	if opt.StageDir == "" {
		opt.StageDir = os.TempDir()
	}
	fs := &FS{RawFileSystem: fuse.NewDefaultRawFileSystem(), opt: opt, ids: newIDMap(),
		stages: &stageBudget{limit: opt.StageLimit}}
	fs.ctx, fs.cancel = context.WithCancel(context.Background())
	var restored map[uint64]key
	if opt.Journal != "" {
		j, entries, err := openJournal(opt.Journal, opt.Log)
		if err != nil {
			return nil, err
		}
		fs.journal, restored = j, entries
	}
	fs.nodes = newNodeTable(fs.journal)
	fs.nodes.restore(restored)
	fs.handles.init(uint64(time.Now().UnixNano()))
	fs.track = newTracker(opt.HungAfter, opt.Log)
	return fs, nil
}

// Nodes returns how many nodes the file system holds (at start: those it
// took over from a predecessor's journal, and the root).
func (fs *FS) Nodes() int { return fs.nodes.len() }

// Stats returns the mount's counters (tracker.go).
func (fs *FS) Stats() Stats { return fs.track.stats() }

// Close ends the background work and closes the clients; files still
// open are committed first where they can be.
func (fs *FS) Close() {
	for _, fh := range fs.handles.all() {
		fs.release(fh)
	}
	fs.track.stop()
	fs.cancel()
	fs.journal.close()
	fs.opt.Identity.Close()
}

// String names the file system for go-fuse's logs.
func (fs *FS) String() string { return "strata:" + fs.opt.Namespace }

// uri is the client's name for path p of the mounted namespace.
func (fs *FS) uri(p string) string { return client.Scheme + fs.opt.Namespace + p }

// caller returns the client acting for the request's caller.
func (fs *FS) caller(h *fuse.InHeader) (*client.Client, syscall.Errno) {
	c, err := fs.opt.Identity.Client(h.Uid, h.Gid)
	if err != nil {
		fs.track.refused(h.Uid, err)
		return nil, syscall.EACCES
	}
	return c, 0
}

// callerAt returns the client acting for the request's caller and the
// path of the request's node: what nearly every request starts with.
func (fs *FS) callerAt(h *fuse.InHeader) (*client.Client, string, syscall.Errno) {
	c, e := fs.caller(h)
	if e != 0 {
		return nil, "", e
	}
	p, e := fs.nodePath(h.NodeId)
	return c, p, e
}

// callerChild returns the client acting for the request's caller and the
// path of name in the request's node, name checked.
func (fs *FS) callerChild(h *fuse.InHeader, name string, isNew bool) (*client.Client, string, syscall.Errno) {
	c, e := fs.caller(h)
	if e != 0 {
		return nil, "", e
	}
	p, e := fs.childPath(h.NodeId, name, isNew)
	return c, p, e
}

// nodePath returns the path of the request's node.
func (fs *FS) nodePath(id uint64) (string, syscall.Errno) {
	p, ok := fs.nodes.path(id)
	if !ok {
		return "", syscall.ENOENT
	}
	return p, 0
}

// childPath returns the path of name in the request's node, name checked.
func (fs *FS) childPath(parent uint64, name string, isNew bool) (string, syscall.Errno) {
	if e := checkName(name, isNew); e != 0 {
		return "", e
	}
	p, e := fs.nodePath(parent)
	if e != 0 {
		return "", e
	}
	return path.Join(p, name), 0
}

// stat returns the status of path p as c sees it.
func (fs *FS) stat(c *client.Client, p string) (*client.FileStatus, syscall.Errno) {
	st, err := c.Stat(fs.ctx, fs.uri(p))
	if err != nil {
		return nil, errnoOf(err)
	}
	return st, 0
}

// entry answers a lookup of name in parent whose status is st: the node,
// referenced once more, and its attributes.
func (fs *FS) entry(parent uint64, name string, st *client.FileStatus, out *fuse.EntryOut) {
	n := fs.nodes.lookup(parent, name)
	out.NodeId, out.Generation = n.id, 1
	fs.fillAttr(st, n.id, &out.Attr)
	out.SetEntryTimeout(fs.opt.EntryTimeout)
	out.SetAttrTimeout(fs.opt.AttrTimeout)
}

// fillAttr fills a's fields from st, with what this mount's writers of
// the node have written and not yet committed.
func (fs *FS) fillAttr(st *client.FileStatus, id uint64, a *fuse.Attr) {
	a.Ino = st.InodeID
	a.Size = st.Length
	if size, ok := fs.handles.writtenSize(id); ok {
		a.Size = size
	}
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = blockSize
	a.Mode = st.Perm & 0o7777
	a.Nlink = 1
	if fs.handles.isHidden(id) {
		a.Nlink = 0 // unlinked while open
	}
	fs.nodes.setStatus(id, st)
	if st.IsDir {
		a.Mode |= syscall.S_IFDIR
		a.Nlink = 2
	} else {
		a.Mode |= syscall.S_IFREG
	}
	a.Uid, a.Gid = fs.ids.uidOf(st.Owner), fs.ids.gidOf(st.Group)
	setTime(&a.Mtime, &a.Mtimensec, st.ModTime)
	setTime(&a.Ctime, &a.Ctimensec, st.ModTime)
	setTime(&a.Atime, &a.Atimensec, st.AccTime)
}

// blockSize is the st_blksize the mount states: the size of the requests
// it takes, so that tools that size their buffers by it (cp, stdio) make
// large ones.
const blockSize = 1 << 20

func setTime(sec *uint64, nsec *uint32, t time.Time) {
	if t.Before(time.Unix(0, 0)) {
		*sec, *nsec = 0, 0
		return
	}
	*sec, *nsec = uint64(t.Unix()), uint32(t.Nanosecond())
}
