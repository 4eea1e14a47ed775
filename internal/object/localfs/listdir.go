package localfs

import (
	"container/heap"
	"context"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/object"
)

// readChunk is how many directory entries ListDir reads at a time.
const readChunk = 4096

// ListDir implements object.Store. The directory's entries come in no
// order, so every page reads all the names of the one directory that holds
// prefix (names and types, from getdents: no stat) and keeps, in a heap, the
// limit smallest keys after the token; only the page's objects are then
// stat'ed. Memory is thus O(limit) however large the directory, and a page
// costs a pass over its names: a million-entry directory takes about as
// long to list, page by page, as a million-object prefix on S3. The token is
// the last entry's key. Directories are common prefixes whether or not they
// are markers (an empty implied directory, left by a crash, shows too).
// Links, devices and names no key can name are left out (ListDirSkips
// says which).
func (s *Store) ListDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, string, error) {
	entries, _, next, err := s.ListDirSkips(ctx, prefix, token, limit)
	return entries, next, err
}

// ListDirSkips implements object.SkipLister: ListDir, and what it left out
// of the page's range of keys.
func (s *Store) ListDirSkips(ctx context.Context, prefix, token string, limit int) ([]object.Entry, []object.Skipped, string, error) {
	entries, skipped, next, err := s.listDir(ctx, prefix, token, limit)
	if err != nil {
		return nil, nil, "", object.WrapError(object.OpListDir, prefix, err)
	}
	return entries, skipped, next, nil
}

func (s *Store) listDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, []object.Skipped, string, error) {
	if limit <= 0 {
		limit = object.DefaultListDirLimit
	}
	dirKey := dirKeyOf(prefix)
	d, err := s.openDir(strings.TrimSuffix(dirKey, "/"))
	if gone(err) {
		return nil, nil, "", nil // no such directory, or a link: nothing below
	}
	if err != nil {
		return nil, nil, "", err
	}
	defer d.Close()
	p := page{dirKey: dirKey, prefix: prefix, token: token, limit: limit}
	if err := p.read(ctx, d); err != nil {
		return nil, nil, "", err
	}
	out := make([]object.Entry, 0, len(p.keys))
	for _, key := range p.keys {
		if object.IsMarker(key) {
			out = append(out, object.Entry{Info: object.Info{Key: key}, Prefix: true})
			continue
		}
		st, err := lstatAt(d, key[len(dirKey):])
		switch {
		case gone(err):
			continue // deleted since it was read
		case err != nil:
			return nil, nil, "", err
		case st.isRegular():
			out = append(out, object.Entry{Info: fileInfo(key, st)})
		}
	}
	if !p.more {
		return out, p.skipped, "", nil
	}
	return out, p.skipped, p.keys[len(p.keys)-1], nil
}

// page is one page of a ListDir being read.
type page struct {
	dirKey, prefix, token string
	limit                 int

	keys    []string // the page's keys, in order
	more    bool     // there are keys after them
	skipped []object.Skipped
	h       maxHeap
}

// read fills the page from the entries of d, the directory of dirKey: the
// limit smallest keys that start with prefix and come after token, and
// what was left out between token and the page's last key.
func (p *page) read(ctx context.Context, d *os.File) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk, err := d.ReadDir(readChunk)
		for _, e := range chunk {
			key, why := entryKey(p.dirKey, e)
			if key == "" || !strings.HasPrefix(key, p.prefix) || key == p.prefix || !object.AfterEntry(key, p.token) {
				continue
			}
			if why != "" {
				p.skip(key, why)
			} else {
				p.add(key)
			}
		}
		if err == io.EOF || (err == nil && len(chunk) == 0) {
			break
		}
		if err != nil {
			return err
		}
	}
	p.keys = slices.Sorted(slices.Values(p.h))
	if len(p.keys) > p.limit {
		p.keys, p.more = p.keys[:p.limit], true
		last := p.keys[len(p.keys)-1]
		p.skipped = slices.DeleteFunc(p.skipped, func(s object.Skipped) bool { return s.Key > last })
	}
	slices.SortFunc(p.skipped, func(a, b object.Skipped) int { return strings.Compare(a.Key, b.Key) })
	return nil
}

// add keeps key if it is among the limit+1 smallest (one more than limit
// tells whether there are more).
func (p *page) add(key string) {
	if p.h.Len() <= p.limit {
		heap.Push(&p.h, key)
	} else if key < p.h[0] {
		p.h[0] = key
		heap.Fix(&p.h, 0)
	}
}

// skip notes key, left out for why, unless it sorts after a full page.
func (p *page) skip(key, why string) {
	if p.h.Len() > p.limit && key > p.h[0] {
		return
	}
	p.skipped = append(p.skipped, object.Skipped{Key: key, Why: why})
}

// maxHeap keeps the largest key on top, to be replaced by smaller ones.
type maxHeap []string

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
