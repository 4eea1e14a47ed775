package fusefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
	"sort"
	"sync/atomic"
	"syscall"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// stage is a file being changed anywhere but at its end: a random write, a
// cut or an extension. Strata's blocks are immutable, so a change in the
// middle of a file is a new version of the file: the bytes written are
// kept in a sparse file on local disk, reads see them over the file as it
// was (base), and the commit writes the new content whole and puts it in
// place atomically (stage.commit). Nothing is ever half-changed: a reader
// elsewhere sees the file before or after, and a commit that fails leaves
// the file as it was.
type stage struct {
	f        *os.File       // the bytes written, at their offsets (unlinked)
	base     *client.Reader // the file when staging began; nil if empty
	baseLen  int64          // its length then
	baseSize int64          // how much of it is still the file's (a cut lowers it)
	size     int64
	dirty    []span // written, sorted, disjoint
	perm     uint32
	budget   *stageBudget
	charged  int64
}

type span struct{ off, end int64 }

// stageBudget bounds the bytes staged by every handle at once, so that a
// random writer cannot fill the local disk unseen: past the limit a write
// fails ENOSPC, as on a full disk.
type stageBudget struct {
	limit int64 // 0: no bound but the disk's
	used  atomic.Int64
}

func (b *stageBudget) charge(n int64) bool {
	if b.used.Add(n) > b.limit && b.limit > 0 {
		b.used.Add(-n)
		return false
	}
	return true
}

// newStage stages the file at p, whose status is st.
func (fs *FS) newStage(c *client.Client, p string, st *client.FileStatus) (*stage, syscall.Errno) {
	f, err := os.CreateTemp(fs.opt.StageDir, "strata-stage-*")
	if err != nil {
		return nil, errnoOf(err)
	}
	os.Remove(f.Name()) // freed when closed, whatever happens to this process
	s := &stage{f: f, baseLen: int64(st.Length), baseSize: int64(st.Length), size: int64(st.Length),
		perm: st.Perm, budget: fs.stages}
	if st.Length > 0 {
		if s.base, err = c.Open(fs.ctx, fs.uri(p)); err != nil {
			f.Close()
			return nil, errnoOf(err)
		}
	}
	return s, 0
}

func (s *stage) write(p []byte, off int64) syscall.Errno {
	if !s.budget.charge(int64(len(p))) {
		return syscall.ENOSPC
	}
	s.charged += int64(len(p))
	if _, err := s.f.WriteAt(p, off); err != nil {
		return errnoOf(err)
	}
	s.add(span{off, off + int64(len(p))})
	s.size = max(s.size, off+int64(len(p)))
	return 0
}

// add merges sp into the dirty spans.
func (s *stage) add(sp span) {
	i := sort.Search(len(s.dirty), func(i int) bool { return s.dirty[i].end >= sp.off })
	j := i
	for j < len(s.dirty) && s.dirty[j].off <= sp.end {
		sp.off, sp.end = min(sp.off, s.dirty[j].off), max(sp.end, s.dirty[j].end)
		j++
	}
	s.dirty = append(s.dirty[:i], append([]span{sp}, s.dirty[j:]...)...)
}

// truncate makes the file size bytes long: bytes past a cut are gone, and
// an extension reads as zeros.
func (s *stage) truncate(size int64) {
	if size < s.size {
		i := sort.Search(len(s.dirty), func(i int) bool { return s.dirty[i].end > size })
		if i < len(s.dirty) && s.dirty[i].off < size {
			s.dirty[i].end = size // a span the cut goes through keeps its start
			i++
		}
		s.dirty = s.dirty[:i]
		s.baseSize = min(s.baseSize, size)
		s.f.Truncate(size)
	}
	s.size = size
}

// readAt reads the staged file: written bytes, else the base's, else
// zeros.
func (s *stage) readAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, nil
	}
	p = p[:min(int64(len(p)), s.size-off)]
	for done := 0; done < len(p); {
		pos := off + int64(done)
		n, err := s.readPiece(p[done:], pos)
		if err != nil {
			return done, err
		}
		done += n
	}
	return len(p), nil
}

// readPiece reads from pos up to the next change of source.
func (s *stage) readPiece(p []byte, pos int64) (int, error) {
	i := sort.Search(len(s.dirty), func(i int) bool { return s.dirty[i].end > pos })
	next := int64(1 << 62)
	if i < len(s.dirty) {
		if s.dirty[i].off <= pos {
			n := min(int64(len(p)), s.dirty[i].end-pos)
			return s.f.ReadAt(p[:n], pos)
		}
		next = s.dirty[i].off
	}
	n := min(int64(len(p)), next-pos)
	if pos < s.baseSize {
		n = min(n, s.baseSize-pos)
		got, err := s.base.ReadAt(p[:n], pos)
		if err != nil && !(errors.Is(err, io.EOF) && int64(got) == n) {
			return got, err
		}
		return int(n), nil
	}
	clear(p[:n])
	return int(n), nil
}

// commit makes the staged content the file's at p: by an append when
// only bytes past its old end were written (block mode), else by writing
// a new version beside it and renaming it over the file.
func (s *stage) commit(fs *FS, c *client.Client, p string) error {
	appendOnly := s.baseSize == s.baseLen && (len(s.dirty) == 0 || s.dirty[0].off >= s.baseLen) && s.size >= s.baseLen
	if appendOnly && s.size == s.baseLen {
		return nil // nothing changed
	}
	if appendOnly {
		w, err := c.Append(fs.ctx, fs.uri(p))
		if err == nil {
			return s.copyTo(w, s.baseLen)
		}
		if !errors.Is(err, fserr.ErrUnsupported) {
			return err
		}
	}
	return s.rewrite(fs, c, p)
}

// rewrite writes the whole staged content to a new file beside p, hidden
// by its name, and renames it over p.
func (s *stage) rewrite(fs *FS, c *client.Client, p string) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmpName := ".strata-rewrite-" + hex.EncodeToString(b[:]) + "-" + path.Base(p)
	if len(tmpName) > 255 {
		tmpName = tmpName[:255]
	}
	tmp := path.Join(path.Dir(p), tmpName)
	w, err := c.Create(fs.ctx, fs.uri(tmp), client.CreateOptions{Perm: s.perm, NonRecursive: true})
	if err != nil {
		return err
	}
	if err := s.copyTo(w, 0); err != nil {
		return err // the writer removed what it created
	}
	if err := c.SetPermission(fs.ctx, fs.uri(tmp), s.perm); err != nil {
		c.Delete(fs.ctx, fs.uri(tmp), false)
		return err
	}
	if err := c.Rename2(fs.ctx, fs.uri(tmp), fs.uri(p), true); err != nil {
		c.Delete(fs.ctx, fs.uri(tmp), false)
		return err
	}
	return nil
}

// copyTo writes the staged content from off to its end to w and closes w.
func (s *stage) copyTo(w *client.Writer, off int64) error {
	buf := make([]byte, 1<<20)
	for off < s.size {
		n, err := s.readAt(buf[:min(int64(len(buf)), s.size-off)], off)
		if err == nil {
			_, err = w.Write(buf[:n])
		}
		if err != nil {
			w.Close()
			return err
		}
		off += int64(n)
	}
	return w.Close()
}

func (s *stage) close() {
	s.f.Close()
	if s.base != nil {
		s.base.Close()
	}
	s.budget.used.Add(-s.charged)
	s.charged = 0
}
