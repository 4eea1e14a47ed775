package localfs

import (
	"container/heap"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

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
func (s *Store) ListDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, string, error) {
	entries, next, err := s.listDir(ctx, prefix, token, limit)
	if err != nil {
		return nil, "", object.WrapError(object.OpListDir, prefix, err)
	}
	return entries, next, nil
}

func (s *Store) listDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, string, error) {
	if limit <= 0 {
		limit = object.DefaultListDirLimit
	}
	dirKey, dir := s.dirOf(prefix)
	keys, more, err := smallestAfter(ctx, dir, dirKey, prefix, token, limit)
	if err != nil {
		return nil, "", err
	}
	out := make([]object.Entry, 0, len(keys))
	for _, key := range keys {
		if object.IsMarker(key) {
			out = append(out, object.Entry{Info: object.Info{Key: key}, Prefix: true})
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, key[len(dirKey):]))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // deleted since it was read
		case err != nil:
			return nil, "", err
		case fi.Mode().IsRegular():
			out = append(out, object.Entry{Info: fileInfo(key, fi)})
		}
	}
	if !more {
		return out, "", nil
	}
	return out, keys[len(keys)-1], nil
}

// smallestAfter returns, in order, the limit smallest keys of the entries of
// dir (the directory of dirKey) that start with prefix and come after token,
// and whether there are more.
func smallestAfter(ctx context.Context, dir, dirKey, prefix, token string, limit int) ([]string, bool, error) {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer d.Close()
	h := &maxHeap{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		chunk, err := d.ReadDir(readChunk)
		for _, e := range chunk {
			key, ok := entryKey(dirKey, e)
			if !ok || !strings.HasPrefix(key, prefix) || key == prefix || !object.AfterEntry(key, token) {
				continue
			}
			// One more than limit tells whether there are more.
			if h.Len() <= limit {
				heap.Push(h, key)
			} else if key < (*h)[0] {
				(*h)[0] = key
				heap.Fix(h, 0)
			}
		}
		if err == io.EOF || (err == nil && len(chunk) == 0) {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	keys := slices.Sorted(slices.Values(*h))
	if len(keys) > limit {
		return keys[:limit], true, nil
	}
	return keys, false, nil
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
