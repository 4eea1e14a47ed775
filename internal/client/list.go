package client

import (
	"context"
	"path"

	"github.com/stratafs/strata/internal/fspath"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// ListPageSize is the number of entries List asks for per request.
const ListPageSize = 1000

// List calls fn for each entry of directory path in name order, fetching
// one page at a time, so a directory of any size streams in bounded memory.
// A file lists as itself. fn's error stops the listing and is returned.
func (c *Client) List(ctx context.Context, path string, fn func(*FileStatus) error) error {
	return c.ListAfter(ctx, path, "", fn)
}

// ListAfter is List of the entries whose names sort after startAfter.
// The next page is asked for as soon as a page comes, while fn takes this
// one's entries: a listing of a big directory waits for the service only
// where the service is slower than fn.
func (c *Client) ListAfter(ctx context.Context, path, startAfter string, fn func(*FileStatus) error) error {
	next := c.fetchPage(ctx, path, startAfter)
	for {
		p := <-next
		if p.err != nil {
			return p.err
		}
		if p.more {
			next = c.fetchPage(ctx, path, p.entries[len(p.entries)-1].Name)
		}
		for _, st := range p.entries {
			if err := fn(st); err != nil {
				return err // a page asked for ahead is dropped when it comes
			}
		}
		if !p.more {
			return nil
		}
	}
}

// page is ListPage's answer.
type page struct {
	entries []*FileStatus
	more    bool
	err     error
}

// fetchPage asks for a page; its answer comes on the channel.
func (c *Client) fetchPage(ctx context.Context, path, startAfter string) <-chan page {
	ch := make(chan page, 1)
	go func() {
		var p page
		p.entries, p.more, p.err = c.ListPage(ctx, path, startAfter)
		ch <- p
	}()
	return ch
}

// ListPage returns one page of directory name's entries, those whose names
// sort after startAfter (up to ListPageSize), and whether more follow. A
// file lists as itself.
func (c *Client) ListPage(ctx context.Context, name, startAfter string) ([]*FileStatus, bool, error) {
	ns, p, err := splitPath(name)
	if err != nil {
		return nil, false, err
	}
	r, err := call(func() (*pb.ListResponse, error) {
		return c.meta.List(ctx, &pb.ListRequest{Header: c.hdr(ns), Path: p, StartAfter: startAfter, Limit: ListPageSize})
	})
	if err != nil {
		return nil, false, err
	}
	dir := p
	if r.Status.GetType() != pb.FileType_FILE_TYPE_DIRECTORY {
		dir = path.Dir(p)
	}
	page := make([]*FileStatus, len(r.Entries))
	j := fspath.NewJoiner(dir)
	for i, e := range r.Entries {
		page[i] = statusFromProto(j, e)
	}
	return page, r.HasMore && len(page) > 0, nil
}

// ReadDir returns all entries of directory path.
func (c *Client) ReadDir(ctx context.Context, path string) ([]*FileStatus, error) {
	var out []*FileStatus
	err := c.List(ctx, path, func(st *FileStatus) error {
		out = append(out, st)
		return nil
	})
	return out, err
}

// Walk calls fn for path and, depth first in name order, everything below
// it (ls -R). fn's error stops the walk. Paths in the statuses are within
// the namespace (no strata:// prefix).
func (c *Client) Walk(ctx context.Context, path string, fn func(*FileStatus) error) error {
	st, err := c.Stat(ctx, path)
	if err != nil {
		return err
	}
	if err := fn(st); err != nil || !st.IsDir {
		return err
	}
	return c.walkDir(ctx, path, fn)
}

// walkDir visits in pre-order, as hadoop fs -ls -R prints: an entry, then
// everything below it, then its next sibling. Memory is one page per level.
func (c *Client) walkDir(ctx context.Context, dir string, fn func(*FileStatus) error) error {
	return c.List(ctx, dir, func(st *FileStatus) error {
		if err := fn(st); err != nil || !st.IsDir {
			return err
		}
		return c.walkDir(ctx, childURI(dir, st.Name), fn)
	})
}

// childURI joins a child name to a path that may carry a strata:// prefix.
func childURI(dir, name string) string {
	if len(dir) > 0 && dir[len(dir)-1] == '/' {
		return dir + name
	}
	return dir + "/" + name
}
