package fusefs

import (
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
)

// setattr is one SETATTR: a chmod, chown, truncate or utimens (or several
// at once), each by its own call of the service, in that order. cur is the
// node's status as the kernel was last told it, if that was within the
// attribute timeout (the kernel trusts it as long): a superuser's chmod or
// chown that would change nothing is then no call at all, and the answer
// is cur with the changes made, not one more stat. tar -x, restoring each
// file's owner, mode and times, makes three SETATTRs a file.
type setattr struct {
	fs    *FS
	c     *client.Client
	in    *fuse.SetAttrIn
	p     string
	cur   *client.FileStatus // nil: not known; stat at the end
	super bool
}

// SetAttr changes a node's attributes.
func (fs *FS) SetAttr(_ <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	defer fs.track.begin("setattr", in.NodeId)()
	c, p, e := fs.callerAt(&in.InHeader)
	if e != 0 {
		return status(e)
	}
	sa := &setattr{fs: fs, c: c, in: in, p: p, cur: fs.nodes.status(in.NodeId, fs.opt.AttrTimeout)}
	if who := fs.whoami(c); who != nil {
		sa.super = who.Superuser
	}
	for _, step := range []func() syscall.Errno{sa.mode, sa.owner, sa.size, sa.times} {
		if e := step(); e != 0 {
			return status(e)
		}
	}
	if sa.cur == nil {
		return status(fs.attrOut(c, in.NodeId, out))
	}
	fs.fillAttr(sa.cur, in.NodeId, &out.Attr)
	out.SetTimeout(fs.opt.AttrTimeout)
	return fuse.OK
}

func (sa *setattr) mode() syscall.Errno {
	mode, ok := sa.in.GetMode()
	if !ok {
		return 0
	}
	mode &= 0o7777
	if sa.super && sa.cur != nil && sa.cur.Perm == mode {
		return 0
	}
	if err := sa.c.SetPermission(sa.fs.ctx, sa.fs.uri(sa.p), mode); err != nil {
		return errnoOf(err)
	}
	if sa.cur != nil {
		sa.cur.Perm = mode
	}
	return 0
}

func (sa *setattr) owner() syscall.Errno {
	uid, uok := sa.in.GetUID()
	gid, gok := sa.in.GetGID()
	if !uok && !gok {
		return 0
	}
	var owner, group string
	if uok {
		owner = sa.fs.ids.userName(uid)
	}
	if gok {
		group = sa.fs.ids.groupName(gid)
	}
	if sa.super && sa.cur != nil && (owner == "" || owner == sa.cur.Owner) && (group == "" || group == sa.cur.Group) {
		return 0
	}
	if err := sa.c.SetOwner(sa.fs.ctx, sa.fs.uri(sa.p), owner, group); err != nil {
		return errnoOf(err)
	}
	if sa.cur != nil {
		sa.cur.Owner, sa.cur.Group = cmpOr(owner, sa.cur.Owner), cmpOr(group, sa.cur.Group)
	}
	return 0
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (sa *setattr) times() syscall.Errno {
	var mtime, atime time.Time
	in, now := sa.in, time.Now()
	if in.Valid&fuse.FATTR_MTIME != 0 {
		mtime = time.Unix(int64(in.Mtime), int64(in.Mtimensec))
		if in.Valid&fuse.FATTR_MTIME_NOW != 0 {
			mtime = now
		}
	}
	if in.Valid&fuse.FATTR_ATIME != 0 {
		atime = time.Unix(int64(in.Atime), int64(in.Atimensec))
		if in.Valid&fuse.FATTR_ATIME_NOW != 0 {
			atime = now
		}
	}
	if mtime.IsZero() && atime.IsZero() {
		return 0
	}
	if err := sa.c.SetTimes(sa.fs.ctx, sa.fs.uri(sa.p), mtime, atime); err != nil {
		return errnoOf(err)
	}
	if sa.cur != nil { // as the service keeps them: to the millisecond
		if !mtime.IsZero() {
			sa.cur.ModTime = time.UnixMilli(mtime.UnixMilli())
		}
		if !atime.IsZero() {
			sa.cur.AccTime = time.UnixMilli(atime.UnixMilli())
		}
	}
	return 0
}

// size cuts or extends a file: through the node's writers here, if any
// (committed at their flush), else at once. The answer is then a stat.
func (sa *setattr) size() syscall.Errno {
	size, ok := sa.in.GetSize()
	if !ok {
		return 0
	}
	sa.cur = nil
	fs, c, p := sa.fs, sa.c, sa.p
	if ws := fs.handles.state(sa.in.NodeId); ws != nil {
		return ws.truncate(fs, c, int64(size))
	}
	st, e := fs.stat(c, p)
	if e != 0 {
		return e
	}
	if st.IsDir {
		return syscall.EISDIR
	}
	if size == st.Length {
		return fs.access(c, st, 2)
	}
	if size < st.Length {
		if err := c.Truncate(fs.ctx, fs.uri(p), size); errnoOf(err) != syscall.EOPNOTSUPP {
			return errnoOf(err)
		}
	}
	s, e := fs.newStage(c, p, st)
	if e != 0 {
		return e
	}
	defer s.close()
	s.truncate(int64(size))
	return errnoOf(s.commit(fs, c, p))
}
