package localfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/object"
)

// List implements object.Store with a depth-first walk that yields keys in
// byte order without sorting them all: siblings are ordered by name, a
// directory's name taken with its trailing "/" (so "a.txt" < "a/" < "a0", as
// their keys are). Subtrees outside prefix or wholly before startAfter are
// never read, and the walk stops after limit keys, so paging stays cheap.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	w := walker{ctx: ctx, prefix: prefix, after: startAfter, limit: limit}
	if err := w.walk(s.root, ""); err != nil {
		return nil, object.WrapError(object.OpList, prefix, err)
	}
	return w.out, nil
}

type walker struct {
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
	if errors.Is(err, fs.ErrNotExist) {
		return nil // pruned by a concurrent Delete
	}
	if err != nil {
		return err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(sortName(a), sortName(b)) })
	for _, e := range entries {
		if w.full() {
			return nil
		}
		if keyPrefix == "" && e.Name() == tmpDir {
			continue
		}
		key := keyPrefix + e.Name()
		if e.IsDir() {
			if err := w.walkSubtree(filepath.Join(dir, e.Name()), key+"/"); err != nil {
				return err
			}
			continue
		}
		if err := w.visitFile(e, key); err != nil {
			return err
		}
	}
	return nil
}

func sortName(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// walkSubtree descends into a directory unless none of its keys (all of
// which start with sub) can match.
func (w *walker) walkSubtree(dir, sub string) error {
	if !strings.HasPrefix(sub, w.prefix) && !strings.HasPrefix(w.prefix, sub) {
		return nil
	}
	// Every key below is sub plus more; if sub sorts before startAfter and is
	// not a prefix of it, all of them do.
	if sub < w.after && !strings.HasPrefix(w.after, sub) {
		return nil
	}
	return w.walk(dir, sub)
}

func (w *walker) visitFile(e fs.DirEntry, key string) error {
	if !strings.HasPrefix(key, w.prefix) || key <= w.after {
		return nil
	}
	info, err := e.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted since ReadDir
	}
	if err != nil {
		return err
	}
	if info.Mode().IsRegular() {
		w.out = append(w.out, object.Info{Key: key, Size: info.Size(), ModTime: info.ModTime()})
	}
	return nil
}
