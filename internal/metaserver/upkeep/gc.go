package upkeep

import (
	"context"
	"errors"
	"log/slog"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// gcBatch bounds the garbage entries one collection round handles.
const gcBatch = 1000

// Buckets opens the buckets of namespaces, behind the one retry layer.
type Buckets interface {
	Get(ctx context.Context, uri string) (object.Store, error)
}

// Collector deletes the objects of deleted files' blocks from their
// buckets.
type Collector struct {
	Replica Replica
	Buckets Buckets
	// Deleted hears of the blocks deleted, for the live workers to drop
	// from their caches.
	Deleted func([]*pb.BlockRef)
	Log     *slog.Logger
}

// Run works through the garbage queue until it is empty or an object store
// fails (the entries then stay queued for the next round). Entries are
// queued by committed commands only, so an object is never deleted before
// the deletion that freed it is durable.
//
// An entry whose bucket URI cannot be opened at all (an unknown scheme, a
// malformed URI: something no retry mends) is dropped, with a warning, and
// its objects, if any, stay where they are: retrying it would warn every
// round, across restarts, for ever.
func (c *Collector) Run(ctx context.Context) error {
	for c.Replica.IsLeader() {
		var items []statemachine.GarbageItem
		if err := c.Replica.Applied(func(r kv.Reader) (err error) {
			items, err = statemachine.GarbageBatch(r, gcBatch)
			return err
		}); err != nil || len(items) == 0 {
			return err
		}
		done, failed := c.collectBatch(ctx, items)
		if len(done) > 0 {
			if _, err := c.Replica.Propose(ctx, statemachine.GarbageDone.Command(&pb.GarbageDoneCommand{Keys: done})); err != nil {
				return err
			}
		}
		if failed != nil {
			return failed
		}
	}
	return nil
}

// collectBatch deals with items and returns the keys of those done, and
// why the others are not.
func (c *Collector) collectBatch(ctx context.Context, items []statemachine.GarbageItem) (done [][]byte, failed error) {
	unusable := map[string]error{} // why, by bucket
	var deleted []*pb.BlockRef
	for _, it := range items {
		refs, err := c.collect(ctx, it)
		deleted = append(deleted, refs...)
		var bad *unusableBucket
		switch {
		case errors.As(err, &bad):
			unusable[bad.uri] = bad.err
		case err != nil:
			failed = errors.Join(failed, err)
			continue
		}
		done = append(done, it.Key)
	}
	if len(deleted) > 0 {
		c.Deleted(deleted)
	}
	for uri, err := range unusable {
		c.Log.Warn("block garbage collection: a bucket cannot be opened; its entries are dropped, "+
			"and whatever objects they name stay in it", "bucket", uri, "err", err)
	}
	return done, failed
}

// collect deletes one entry's object, or the orphans of one file, and
// returns the blocks it deleted.
func (c *Collector) collect(ctx context.Context, it statemachine.GarbageItem) ([]*pb.BlockRef, error) {
	if it.StoreURI == "" {
		return nil, nil // a namespace without a bucket holds no objects
	}
	store, err := c.Buckets.Get(ctx, it.StoreURI)
	if err != nil {
		return nil, &unusableBucket{uri: it.StoreURI, err: err}
	}
	if it.Block != 0 {
		if err := store.Delete(ctx, blocks.ObjectKey(it.Inode, it.Block)); err != nil {
			return nil, err
		}
		return []*pb.BlockRef{{InodeId: it.Inode, BlockId: it.Block}}, nil
	}
	var keep map[uint64]bool
	if err := c.Replica.Applied(func(r kv.Reader) (err error) {
		keep, _, err = statemachine.CommittedBlocks(r, it.Inode)
		return err
	}); err != nil {
		return nil, err
	}
	return deleteOrphans(ctx, store, it.Inode, keep)
}

// unusableBucket is a garbage entry's bucket whose URI cannot be opened.
type unusableBucket struct {
	uri string
	err error
}

func (e *unusableBucket) Error() string { return e.err.Error() }

// deleteOrphans deletes the objects of file inode that keep does not name,
// and returns their blocks.
func deleteOrphans(ctx context.Context, store object.Store, inode uint64, keep map[uint64]bool) ([]*pb.BlockRef, error) {
	prefix, after := blocks.ObjectPrefix(inode), ""
	var deleted []*pb.BlockRef
	for {
		page, err := store.List(ctx, prefix, after, 1000)
		if err != nil {
			return deleted, err
		}
		for _, info := range page {
			if id, ok := blocks.ParseObjectKey(inode, info.Key); ok && !keep[id] {
				if err := store.Delete(ctx, info.Key); err != nil {
					return deleted, err
				}
				deleted = append(deleted, &pb.BlockRef{InodeId: inode, BlockId: id})
			}
		}
		if len(page) < 1000 {
			return deleted, nil
		}
		after = page[len(page)-1].Key
	}
}
