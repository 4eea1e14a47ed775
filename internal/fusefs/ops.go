package fusefs

import (
	"path"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Lookup finds name in a directory.
func (fs *FS) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	defer fs.track.begin("lookup", h.NodeId)()
	c, p, e := fs.callerChild(h, name, false)
	if e != 0 {
		return status(e)
	}
	st, e := fs.stat(c, p)
	if e == syscall.ENOENT && fs.opt.NegativeTimeout > 0 {
		out.NodeId = 0 // a negative entry the kernel may keep
		out.SetEntryTimeout(fs.opt.NegativeTimeout)
		return fuse.OK
	}
	if e != 0 {
		return status(e)
	}
	fs.entry(h.NodeId, name, st, out)
	return fuse.OK
}

// Forget drops the kernel's references to a node.
func (fs *FS) Forget(nodeid, nlookup uint64) { fs.nodes.forget(nodeid, nlookup) }

// GetAttr states a node's attributes, as the service has them now.
func (fs *FS) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	defer fs.track.begin("getattr", in.NodeId)()
	c, e := fs.caller(&in.InHeader)
	if e != 0 {
		return status(e)
	}
	return status(fs.attrOut(c, in.NodeId, out))
}

func (fs *FS) attrOut(c *client.Client, node uint64, out *fuse.AttrOut) syscall.Errno {
	p, e := fs.nodePath(node)
	if e != 0 {
		return e
	}
	st, e := fs.stat(c, p)
	if e != 0 {
		return e
	}
	fs.fillAttr(st, node, &out.Attr)
	out.SetTimeout(fs.opt.AttrTimeout)
	return 0
}

// Mkdir makes a directory.
func (fs *FS) Mkdir(_ <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	defer fs.track.begin("mkdir", in.NodeId)()
	c, p, e := fs.callerChild(&in.InHeader, name, true)
	if e != 0 {
		return status(e)
	}
	created, err := c.Mkdir(fs.ctx, fs.uri(p), in.Mode&0o7777)
	if err != nil {
		return status(errnoOf(err))
	}
	if !created {
		return fuse.Status(syscall.EEXIST)
	}
	return fs.lookupNew(c, in.NodeId, name, p, out)
}

// lookupNew answers an operation that made name with its entry.
func (fs *FS) lookupNew(c *client.Client, parent uint64, name, p string, out *fuse.EntryOut) fuse.Status {
	st, e := fs.stat(c, p)
	if e != 0 {
		return status(e)
	}
	fs.entry(parent, name, st, out)
	return fuse.OK
}

// Mknod makes an empty regular file; Strata has no device files, FIFOs
// or sockets (EPERM, as a file system without them answers).
func (fs *FS) Mknod(_ <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	defer fs.track.begin("mknod", in.NodeId)()
	if in.Mode&syscall.S_IFMT != syscall.S_IFREG && in.Mode&syscall.S_IFMT != 0 {
		return fuse.EPERM
	}
	c, p, e := fs.callerChild(&in.InHeader, name, true)
	if e != 0 {
		return status(e)
	}
	if err := c.WriteFile(fs.ctx, fs.uri(p), nil, client.CreateOptions{Perm: in.Mode & 0o7777, NonRecursive: true}); err != nil {
		return status(errnoOf(err))
	}
	return fs.lookupNew(c, in.NodeId, name, p, out)
}

// Unlink removes a file.
func (fs *FS) Unlink(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	defer fs.track.begin("unlink", h.NodeId)()
	return status(fs.remove(h, name, false))
}

// Rmdir removes an empty directory.
func (fs *FS) Rmdir(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	defer fs.track.begin("rmdir", h.NodeId)()
	return status(fs.remove(h, name, true))
}

func (fs *FS) remove(h *fuse.InHeader, name string, dir bool) syscall.Errno {
	c, p, e := fs.callerChild(h, name, false)
	if e != 0 {
		return e
	}
	st, e := fs.stat(c, p)
	switch {
	case e != 0:
		return e
	case dir && !st.IsDir:
		return syscall.ENOTDIR
	case !dir && st.IsDir:
		return syscall.EISDIR
	}
	if n := fs.nodes.peek(h.NodeId, name); !dir && n != 0 && fs.handles.isOpen(n) {
		return fs.hideOpen(c, h.NodeId, name, n, p)
	}
	if _, err := c.Delete(fs.ctx, fs.uri(p), false); err != nil {
		return errnoOf(err)
	}
	fs.nodes.unlink(h.NodeId, name)
	return 0
}

// hideOpen unlinks a file that is open here as NFS clients do: it is
// renamed to a hidden name in its directory, where its open files read
// and write it on, and removed at its last close. (Strata removes a
// deleted file's blocks: an open file unlinked for real could not be read
// to its end.)
func (fs *FS) hideOpen(c *client.Client, parent uint64, name string, node uint64, p string) syscall.Errno {
	hidden := ".strata-unlinked-" + strconv.FormatUint(node, 16) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	dst := path.Join(path.Dir(p), hidden)
	if err := c.Rename2(fs.ctx, fs.uri(p), fs.uri(dst), false); err != nil {
		return errnoOf(err)
	}
	fs.nodes.rename(parent, name, parent, hidden)
	fs.handles.hide(node, dst)
	return 0
}

// Rename moves an entry, atomically, as the service's rename does:
// replacing a file or an empty directory, or (RENAME_NOREPLACE) nothing.
// RENAME_EXCHANGE and RENAME_WHITEOUT are refused (EINVAL, as a file
// system without them answers).
func (fs *FS) Rename(_ <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	defer fs.track.begin("rename", in.NodeId)()
	const noReplace = 1
	if in.Flags&^noReplace != 0 {
		return fuse.EINVAL
	}
	c, src, e := fs.callerChild(&in.InHeader, oldName, false)
	if e != 0 {
		return status(e)
	}
	dst, e := fs.childPath(in.Newdir, newName, true)
	if e != 0 {
		return status(e)
	}
	if e := fs.renameTypes(c, src, dst); e != 0 {
		return status(e)
	}
	if err := c.Rename2(fs.ctx, fs.uri(src), fs.uri(dst), in.Flags&noReplace == 0); err != nil {
		return status(errnoOf(err))
	}
	fs.nodes.rename(in.NodeId, oldName, in.Newdir, newName)
	return fuse.OK
}

// renameTypes refuses what rename(2) refuses of the types at both ends: a
// directory over a file, a file over a directory. A rename onto itself is
// a success that changes nothing, found by the caller's stat of both.
func (fs *FS) renameTypes(c *client.Client, src, dst string) syscall.Errno {
	s, e := fs.stat(c, src)
	if e != 0 {
		return e
	}
	d, e := fs.stat(c, dst)
	switch {
	case e == syscall.ENOENT:
		return 0
	case e != 0:
		return e
	case s.IsDir && !d.IsDir:
		return syscall.ENOTDIR
	case !s.IsDir && d.IsDir:
		return syscall.EISDIR
	}
	return 0
}

// Link: Strata has no hard links (EPERM, link(2)'s answer on a file
// system without them).
func (fs *FS) Link(<-chan struct{}, *fuse.LinkIn, string, *fuse.EntryOut) fuse.Status {
	return fuse.EPERM
}

// Symlink: Strata has no symbolic links (EPERM, symlink(2)'s answer on a
// file system without them).
func (fs *FS) Symlink(<-chan struct{}, *fuse.InHeader, string, string, *fuse.EntryOut) fuse.Status {
	return fuse.EPERM
}

// Readlink: nothing is a link.
func (fs *FS) Readlink(<-chan struct{}, *fuse.InHeader) ([]byte, fuse.Status) {
	return nil, fuse.EINVAL
}

// Extended attributes do not exist in Strata yet: none to get or list,
// none may be set.
func (fs *FS) GetXAttr(<-chan struct{}, *fuse.InHeader, string, []byte) (uint32, fuse.Status) {
	return 0, fuse.ENOATTR
}

// ListXAttr lists none.
func (fs *FS) ListXAttr(<-chan struct{}, *fuse.InHeader, []byte) (uint32, fuse.Status) {
	return 0, fuse.OK
}

// SetXAttr refuses every attribute.
func (fs *FS) SetXAttr(<-chan struct{}, *fuse.SetXAttrIn, string, []byte) fuse.Status {
	return fuse.Status(syscall.EOPNOTSUPP)
}

// RemoveXAttr finds none to remove.
func (fs *FS) RemoveXAttr(<-chan struct{}, *fuse.InHeader, string) fuse.Status {
	return fuse.ENOATTR
}

// Fallocate is not offered: glibc's posix_fallocate writes instead.
func (fs *FS) Fallocate(<-chan struct{}, *fuse.FallocateIn) fuse.Status {
	return fuse.Status(syscall.EOPNOTSUPP)
}

// FsyncDir has nothing to do: a directory's changes are durable when
// their calls return.
func (fs *FS) FsyncDir(<-chan struct{}, *fuse.FsyncIn) fuse.Status { return fuse.OK }

// StatFs states the namespace's use: its bytes and files exactly (the
// root's aggregates), and room without bound (the bucket's).
func (fs *FS) StatFs(_ <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	defer fs.track.begin("statfs", h.NodeId)()
	c, e := fs.caller(h)
	if e != 0 {
		return status(e)
	}
	cs, err := c.ContentSummary(fs.ctx, fs.uri("/"))
	if err != nil {
		return status(errnoOf(err))
	}
	const bsize, free = 4096, 1 << 38 // 1 PiB of 4 KiB blocks
	used := (cs.Length + bsize - 1) / bsize
	out.Bsize, out.Frsize, out.NameLen = bsize, bsize, 255
	out.Blocks, out.Bfree, out.Bavail = used+free, free, free
	out.Files, out.Ffree = cs.FileCount+cs.DirectoryCount+free, free
	return fuse.OK
}

// Access answers access(2) from the entry's permission bits and the
// caller's identity as the service knows it (its superuser passes all but
// execute on a file no one may execute), as the service would decide.
func (fs *FS) Access(_ <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	defer fs.track.begin("access", in.NodeId)()
	c, p, e := fs.callerAt(&in.InHeader)
	if e != 0 {
		return status(e)
	}
	st, e := fs.stat(c, p)
	if e != 0 {
		return status(e)
	}
	return status(fs.access(c, st, in.Mask&7))
}

// access checks mask (4 read, 2 write, 1 execute) against st for c's user.
func (fs *FS) access(c *client.Client, st *client.FileStatus, mask uint32) syscall.Errno {
	who := fs.whoami(c)
	if who == nil {
		return 0 // the service will decide at the call
	}
	if who.Superuser {
		if mask&1 != 0 && !st.IsDir && st.Perm&0o111 == 0 {
			return syscall.EACCES
		}
		return 0
	}
	bits := st.Perm & 7
	switch {
	case st.Owner == who.User:
		bits = st.Perm >> 6 & 7
	case slices.Contains(who.Groups, st.Group):
		bits = st.Perm >> 3 & 7
	}
	if bits&mask != mask {
		return syscall.EACCES
	}
	return 0
}

// whoami returns who the service takes c's calls for, asked once per
// client; nil if the service could not say.
func (fs *FS) whoami(c *client.Client) *pb.WhoAmIResponse {
	if w, ok := fs.who.Load(c); ok {
		return w.(*pb.WhoAmIResponse)
	}
	w, err := c.WhoAmI(fs.ctx)
	if err != nil {
		return nil
	}
	fs.who.Store(c, w)
	return w
}
