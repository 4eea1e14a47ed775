package localfs

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/object"
)

// List implements object.Store with a depth-first walk that yields keys in
// byte order without sorting them all: siblings are ordered by name, a
// directory's name taken with its trailing "/" (so "a.txt" < "a/" < "a0", as
// their keys are), and a marker directory yields its own key before its
// children's. The walk starts in the directory of the prefix (blocks/<i>/
// for block mode's scan of a file's blocks); subtrees outside prefix or
// wholly before startAfter are never read, and the walk stops after limit
// keys, so paging stays cheap. Each directory is opened from the one above
// it, never through a link.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	w := walker{s: s, ctx: ctx, prefix: prefix, after: startAfter, limit: limit}
	dirKey := dirKeyOf(prefix)
	d, err := s.openDir(strings.TrimSuffix(dirKey, "/"))
	if gone(err) {
		return nil, nil // never there, or pruned by a concurrent Delete
	}
	if err == nil {
		defer d.Close()
		if dirKey != "" && dirKey == prefix && prefix > startAfter {
			err = w.visitMarker(d, prefix) // the directory's own marker comes first
		}
	}
	if err == nil {
		err = w.walk(d, dirKey)
	}
	if err != nil {
		return nil, object.WrapError(object.OpList, prefix, err)
	}
	return w.out, nil
}

// dirKeyOf returns the key prefix of the directory that holds the keys
// starting with prefix: "a/b/" for "a/b/" and for "a/b/c".
func dirKeyOf(prefix string) string {
	return prefix[:strings.LastIndexByte(prefix, '/')+1]
}

type walker struct {
	s             *Store
	ctx           context.Context
	prefix, after string
	limit         int
	out           []object.Info
}

func (w *walker) full() bool { return w.limit > 0 && len(w.out) >= w.limit }

// walk visits the open directory d, whose keys all start with keyPrefix
// ("" or "x/y/").
func (w *walker) walk(d *os.File, keyPrefix string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := d.ReadDir(-1)
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(sortName(a), sortName(b)) })
	for _, e := range entries {
		if w.full() {
			return nil
		}
		key, why := entryKey(keyPrefix, e)
		switch {
		case key == "" || why != "":
		case e.IsDir():
			if err := w.walkSubtree(d, e.Name(), key); err != nil {
				return err
			}
		default:
			if err := w.visitFile(d, e.Name(), key); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryKey returns the key of dir entry e in the directory of keyPrefix
// (ending in "/" for a directory), and why "" if it is an object or a
// directory that a key can name; else why says why not. It returns no key
// for the store's own temp directory.
func entryKey(keyPrefix string, e fs.DirEntry) (key, why string) {
	name := e.Name()
	if keyPrefix == "" && name == tmpDir {
		return "", ""
	}
	key = keyPrefix + name
	switch t := e.Type(); {
	case e.IsDir():
		key += "/"
	case t&fs.ModeSymlink != 0:
		return key, "a symbolic link"
	case !t.IsRegular():
		return key, "neither a regular file nor a directory"
	}
	switch {
	case !utf8.ValidString(name):
		return key, "not UTF-8"
	case len(key) > object.MaxKeyLen:
		return key, "longer than the longest key, 1,024 bytes"
	}
	return key, ""
}

func sortName(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// walkSubtree visits the marker of the directory name in d and descends
// into it, unless none of its keys (all of which start with sub) can match.
func (w *walker) walkSubtree(d *os.File, name, sub string) error {
	if !strings.HasPrefix(sub, w.prefix) && !strings.HasPrefix(w.prefix, sub) {
		return nil
	}
	// Every key below is sub plus more; if sub sorts before startAfter and is
	// not a prefix of it, all of them do.
	if sub < w.after && !strings.HasPrefix(w.after, sub) {
		return nil
	}
	sd, err := openAt(d, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if gone(err) {
		return nil // removed since it was read, or replaced by a link
	}
	if err != nil {
		return err
	}
	defer sd.Close()
	if strings.HasPrefix(sub, w.prefix) && sub > w.after {
		if err := w.visitMarker(sd, sub); err != nil {
			return err
		}
	}
	if w.full() {
		return nil
	}
	return w.walk(sd, sub)
}

// visitMarker yields the marker of the open directory d, unless it is implied.
func (w *walker) visitMarker(d *os.File, key string) error {
	st, err := fstat(d)
	if err != nil {
		return err
	}
	if imp, err := isImplied(d); err != nil || imp {
		return err
	}
	w.out = append(w.out, fileInfo(key, st))
	return nil
}

func (w *walker) visitFile(d *os.File, name, key string) error {
	if !strings.HasPrefix(key, w.prefix) || key <= w.after {
		return nil
	}
	st, err := lstatAt(d, name)
	if gone(err) {
		return nil // deleted since it was read
	}
	if err != nil {
		return err
	}
	if st.isRegular() {
		w.out = append(w.out, fileInfo(key, st))
	}
	return nil
}
