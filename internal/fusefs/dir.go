package fusefs

import (
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/client"
)

// dirHandle is an open directory, listed one page of the service's at a
// time, so that a directory of millions of entries streams in bounded
// memory. Its stream's offsets: 1 and 2 are "." and "..", entry i (from 0)
// is i+3; a read at an offset before the page held starts over.
type dirHandle struct {
	node uint64
	path string
	c    *client.Client
	mu   struct {
		sync.Mutex
		page  []*client.FileStatus
		first uint64 // the index of page[0] in the listing
		more  bool   // pages follow page
		begun bool
	}
}

// OpenDir opens a directory.
func (fs *FS) OpenDir(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	defer fs.track.begin("opendir", in.NodeId)()
	c, p, e := fs.callerAt(&in.InHeader)
	if e != 0 {
		return status(e)
	}
	st, e := fs.stat(c, p)
	if e != 0 {
		return status(e)
	}
	if !st.IsDir {
		return fuse.ENOTDIR
	}
	out.Fh = fs.handles.addDir(&dirHandle{node: in.NodeId, path: p, c: c})
	return fuse.OK
}

// ReleaseDir closes a directory.
func (fs *FS) ReleaseDir(in *fuse.ReleaseIn) { fs.handles.removeDir(in.Fh) }

// ReadDir lists names and types.
func (fs *FS) ReadDir(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	defer fs.track.begin("readdir", in.NodeId)()
	return status(fs.readDir(in, out, false))
}

// ReadDirPlus lists names with their attributes: one call of the service
// per page answers what would be a lookup per entry.
func (fs *FS) ReadDirPlus(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	defer fs.track.begin("readdirplus", in.NodeId)()
	return status(fs.readDir(in, out, true))
}

func (fs *FS) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) syscall.Errno {
	d := fs.handles.dir(in.Fh)
	if d == nil {
		return syscall.EBADF
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	off := in.Offset
	for ; off < 2; off++ {
		name := []string{".", ".."}[off]
		if !fs.addEntry(out, plus, fuse.DirEntry{Name: name, Mode: syscall.S_IFDIR, Off: off + 1}, nil) {
			return 0
		}
	}
	for {
		st, e := d.at(fs, off-2)
		if e != 0 || st == nil {
			return e
		}
		de := fuse.DirEntry{Name: st.Name, Ino: st.InodeID, Mode: syscall.S_IFREG, Off: off + 1}
		if st.IsDir {
			de.Mode = syscall.S_IFDIR
		}
		if !fs.addEntry(out, plus, de, func(eo *fuse.EntryOut) { fs.entry(d.node, st.Name, st, eo) }) {
			return 0
		}
		off++
	}
}

// addEntry adds e to out, and with plus its attributes (fill, which
// references its node: only once the entry fits).
func (fs *FS) addEntry(out *fuse.DirEntryList, plus bool, e fuse.DirEntry, fill func(*fuse.EntryOut)) bool {
	if !plus {
		return out.AddDirEntry(e)
	}
	eo := out.AddDirLookupEntry(e)
	if eo == nil {
		return false
	}
	if fill != nil {
		fill(eo)
	}
	return true
}

// at returns entry i of the listing (nil past its end), fetching pages
// as needed.
func (d *dirHandle) at(fs *FS, i uint64) (*client.FileStatus, syscall.Errno) {
	if !d.mu.begun || i < d.mu.first {
		if e := d.fetch(fs, "", 0); e != 0 {
			return nil, e
		}
	}
	for i >= d.mu.first+uint64(len(d.mu.page)) {
		if !d.mu.more {
			return nil, 0
		}
		last := d.mu.page[len(d.mu.page)-1].Name
		if e := d.fetch(fs, last, d.mu.first+uint64(len(d.mu.page))); e != 0 {
			return nil, e
		}
	}
	return d.mu.page[i-d.mu.first], 0
}

func (d *dirHandle) fetch(fs *FS, after string, first uint64) syscall.Errno {
	page, more, err := d.c.ListPage(fs.ctx, fs.uri(d.path), after)
	if err != nil {
		return errnoOf(err)
	}
	d.mu.page, d.mu.first, d.mu.more, d.mu.begun = page, first, more, true
	return 0
}
