package client

import (
	"context"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// ListPageSize is the number of entries List asks for per request.
const ListPageSize = 1000

// List calls fn for each entry of directory path in name order, fetching
// one page at a time, so a directory of any size streams in bounded memory.
// A file lists as itself. fn's error stops the listing and is returned.
func (c *Client) List(ctx context.Context, path string, fn func(*FileStatus) error) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	after := ""
	for {
		r, err := call(func() (*pb.ListResponse, error) {
			return c.meta.List(ctx, &pb.ListRequest{Header: c.hdr(ns), Path: p, StartAfter: after, Limit: ListPageSize})
		})
		if err != nil {
			return err
		}
		dir := p
		if r.Status.GetType() != pb.FileType_FILE_TYPE_DIRECTORY {
			dir = parentOf(p)
		}
		for _, e := range r.Entries {
			if err := fn(statusFromProto(dir, e)); err != nil {
				return err
			}
		}
		if !r.HasMore || len(r.Entries) == 0 {
			return nil
		}
		after = r.Entries[len(r.Entries)-1].Name
	}
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
