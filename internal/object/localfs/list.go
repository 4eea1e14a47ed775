package localfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/stratafs/strata/internal/object"
)

// List implements object.Store with a depth-first walk that yields keys in
// byte order without sorting them all: siblings are ordered by name, a
// directory's name taken with its trailing "/" (so "a.txt" < "a/" < "a0", as
// their keys are), and a marker directory yields its own key before its
// children's. The walk starts in the directory of the prefix (blocks/<i>/
// for block mode's scan of a file's blocks); subtrees outside prefix or
// wholly before startAfter are never read, and the walk stops after limit
// keys, so paging stays cheap.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	w := walker{s: s, ctx: ctx, prefix: prefix, after: startAfter, limit: limit}
	dirKey, dir := s.dirOf(prefix)
	var err error
	if dirKey != "" && dirKey == prefix && prefix > startAfter {
		err = w.visitMarker(dir, prefix) // the directory's own marker comes first
	}
	if err == nil {
		err = w.walk(dir, dirKey)
	}
	if err != nil {
		return nil, object.WrapError(object.OpList, prefix, err)
	}
	return w.out, nil
}

// dirOf returns the key prefix and the path of the directory that holds the
// keys starting with prefix: "a/b/" for "a/b/" and for "a/b/c".
func (s *Store) dirOf(prefix string) (string, string) {
	dirKey := prefix[:strings.LastIndexByte(prefix, '/')+1]
	return dirKey, filepath.Join(s.root, filepath.FromSlash(dirKey))
}

type walker struct {
	s             *Store
	ctx           context.Context
	prefix, after string
	limit         int
	out           []object.Info
}

func (w *walker) full() bool { return w.limit > 0 && len(w.out) >= w.limit }

// walk visits dir, whose keys all start with keyPrefix ("" or "x/y/").
func (w *walker) walk(dir, keyPrefix string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // pruned by a concurrent Delete, or never there
	}
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(sortName(a), sortName(b)) })
	for _, e := range entries {
		if w.full() {
			return nil
		}
		key, ok := entryKey(keyPrefix, e)
		switch {
		case !ok:
		case e.IsDir():
			if err := w.walkSubtree(filepath.Join(dir, e.Name()), key); err != nil {
				return err
			}
		default:
			if err := w.visitFile(e, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryKey returns the key of dir entry e in the directory of keyPrefix
// (ending in "/" for a directory), or false if e can be no object or marker.
func entryKey(keyPrefix string, e fs.DirEntry) (string, bool) {
	name := e.Name()
	if (keyPrefix == "" && name == tmpDir) || !utf8.ValidString(name) {
		return "", false
	}
	key := keyPrefix + name
	switch {
	case e.IsDir():
		key += "/"
	case !e.Type().IsRegular():
		return "", false // links, devices and the like are no objects
	}
	return key, len(key) <= object.MaxKeyLen
}

func sortName(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// walkSubtree visits the marker of a directory and descends into it, unless
// none of its keys (all of which start with sub) can match.
func (w *walker) walkSubtree(dir, sub string) error {
	if !strings.HasPrefix(sub, w.prefix) && !strings.HasPrefix(w.prefix, sub) {
		return nil
	}
	// Every key below is sub plus more; if sub sorts before startAfter and is
	// not a prefix of it, all of them do.
	if sub < w.after && !strings.HasPrefix(w.after, sub) {
		return nil
	}
	if strings.HasPrefix(sub, w.prefix) && sub > w.after {
		if err := w.visitMarker(dir, sub); err != nil {
			return err
		}
	}
	if w.full() {
		return nil
	}
	return w.walk(dir, sub)
}

func (w *walker) visitMarker(dir, key string) error {
	info, err := w.s.headMarker(key, dir)
	switch {
	case errors.Is(err, object.ErrNotFound):
		return nil // implied, or gone
	case err != nil:
		return err
	}
	w.out = append(w.out, info)
	return nil
}

func (w *walker) visitFile(e fs.DirEntry, key string) error {
	if !strings.HasPrefix(key, w.prefix) || key <= w.after {
		return nil
	}
	fi, err := e.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted since ReadDir
	}
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		w.out = append(w.out, fileInfo(key, fi))
	}
	return nil
}
