package cachemode

import (
	"context"
	"errors"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// listPage is the bucket listing's page size: S3's own cap per request,
// and the entries one SyncListing command carries.
const listPage = object.DefaultListDirLimit

// view returns what the state knows of path.
func (c *call) view(ctx context.Context, path string) (*namespace.CacheView, error) {
	var v *namespace.CacheView
	err := c.svc.View(ctx, func(r kv.Reader) (err error) {
		v, err = c.fs.ViewCache(r, c.ns.Name, path)
		return err
	})
	return v, err
}

// fresh reports whether what the bucket confirmed at t (ms) is still to be
// trusted, by the namespace's sync interval and the admin's resyncs.
func (c *call) fresh(v *namespace.CacheView, t int64) bool {
	if t == 0 || t <= v.StaleBefore {
		return false
	}
	switch iv := v.NS.SyncInterval; {
	case iv < 0:
		return true
	case iv == 0:
		return false
	default:
		return c.svc.Now().UnixMilli()-t < iv*1000
	}
}

// ensureEntry makes what the state holds at path fresh: it asks the bucket
// whether path is an object, a directory or nothing, unless the state
// knows already (a fresh entry, an entry being written here, or a name
// missing from a fresh listing of its directory), and logs the answer. It
// returns the state's view of path after that.
func (c *call) ensureEntry(ctx context.Context, path string) (*namespace.CacheView, error) {
	v, err := c.view(ctx, path)
	if err != nil || c.known(v) {
		return v, err
	}
	if err := c.checkEntry(ctx, path); err != nil {
		return nil, err
	}
	return c.view(ctx, path)
}

// checkEntry asks the bucket what path is and logs the answer. The root
// is always a directory.
func (c *call) checkEntry(ctx context.Context, path string) error {
	if namespace.ObjectKey(path) == "" {
		return nil
	}
	return c.once(ctx, flightKey{ns: c.ns.Name, path: path}, func(ctx context.Context) error {
		e, err := c.check(ctx, namespace.ObjectKey(path))
		if err != nil {
			return err
		}
		_, err = c.svc.Propose(ctx, statemachine.SyncPath.Command(&pb.SyncPathCommand{Namespace: c.ns.Name,
			Path: path, Entry: e}))
		return err
	})
}

// known reports whether v is fresh enough to answer from.
func (c *call) known(v *namespace.CacheView) bool {
	switch {
	case v.Node == nil:
		return c.fresh(v, v.ParentListed)
	case v.Node.Parent == 0 && v.Node.IsDir():
		return true // the root, which always exists
	case v.Node.Holder != "":
		return true // being written here: its object is not in the bucket yet
	}
	return c.fresh(v, v.State.Synced)
}

// check asks the bucket what it holds at key: an object (a file), objects
// below key/ or a marker (a directory), or nothing (nil). An object and a
// directory of the same name are both possible in a bucket: the object
// wins, as it does for S3A's getFileStatus. NB: a local directory that
// holds only what no listing shows (symbolic links) is a directory too,
// as its parent's listing shows it: an empty one.
func (c *call) check(ctx context.Context, key string) (*pb.BucketEntry, error) {
	info, err := c.store.Head(ctx, key)
	if err == nil {
		return fileEntry(info), nil
	}
	if !errors.Is(err, object.ErrNotFound) {
		return nil, err
	}
	below, skipped, _, err := object.ListDirSkips(ctx, c.store, key+"/", "", 1)
	if err != nil || len(below) > 0 || len(skipped) > 0 {
		return &pb.BucketEntry{Directory: true}, err
	}
	if _, err = c.store.Head(ctx, key+"/"); err == nil {
		return &pb.BucketEntry{Directory: true}, nil
	}
	if errors.Is(err, object.ErrNotFound) {
		return nil, nil
	}
	return nil, err
}

func fileEntry(info object.Info) *pb.BucketEntry {
	return &pb.BucketEntry{Size: uint64(info.Size), Etag: info.ETag, Modified: info.ModTime.UnixMilli()}
}

// ensureListed makes directory path's children, as the state holds them,
// fresh: unless a listing of it is, it lists the bucket under the
// directory's prefix page by page, logging each page as it comes, so that
// a directory of any size is loaded without being held whole.
func (c *call) ensureListed(ctx context.Context, path string, v *namespace.CacheView) error {
	if c.fresh(v, v.State.Listed) {
		return nil
	}
	return c.once(ctx, flightKey{ns: c.ns.Name, path: path, listing: true}, func(ctx context.Context) error {
		return c.list(ctx, path)
	})
}

func (c *call) list(ctx context.Context, path string) error {
	prefix := namespace.ObjectKey(path)
	if prefix != "" {
		prefix += "/"
	}
	start := c.svc.Now().UnixMilli()
	var left skips
	for token := ""; ; {
		entries, skipped, next, err := object.ListDirSkips(ctx, c.store, prefix, token, listPage)
		if err != nil {
			return err
		}
		for _, s := range skipped {
			left.add(s.Key, s.Why)
		}
		cmd := &pb.SyncListingCommand{Namespace: c.ns.Name, Path: path, Start: start, Last: next == ""}
		for _, e := range entries {
			if left.addEntry(prefix, e) {
				cmd.Entries = append(cmd.Entries, bucketEntry(prefix, e))
			}
		}
		if _, err := c.svc.Propose(ctx, statemachine.SyncListing.Command(cmd)); err != nil {
			return err
		}
		if next == "" {
			break
		}
		token = next
	}
	c.reportSkips(path, &left)
	return nil
}

// bucketEntry is listing entry e under prefix as a child entry.
func bucketEntry(prefix string, e object.Entry) *pb.BucketEntry {
	name := e.Key[len(prefix):]
	if e.Prefix {
		return &pb.BucketEntry{Name: name[:len(name)-1], Directory: true}
	}
	be := fileEntry(e.Info)
	be.Name = name
	return be
}

// flightKey names one bucket check or listing; a flight is one under way,
// which the callers that want the same wait for instead of repeating it.
type flightKey struct {
	ns, path string
	listing  bool
}

type flight struct {
	done chan struct{}
	err  error
}

// once runs fn unless a run for key is under way, in which case it waits
// for that one's outcome, or a mutation holds a path that key bears on, in
// which case it does nothing: the state answers (hold.go). A caller that
// gives up stops waiting; the run goes on for the others (its context is
// not canceled with the caller's: the retry layer bounds its requests, and
// a lost leadership its proposals).
func (c *call) once(ctx context.Context, key flightKey, fn func(context.Context) error) error {
	c.mu.Lock()
	f, ok := c.mu.flights[key]
	if !ok && c.heldLocked(key) {
		c.mu.Unlock()
		return nil
	}
	if !ok {
		f = &flight{done: make(chan struct{})}
		c.mu.flights[key] = f
		go func() {
			f.err = fn(context.WithoutCancel(ctx))
			c.mu.Lock()
			delete(c.mu.flights, key)
			c.mu.Unlock()
			close(f.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
