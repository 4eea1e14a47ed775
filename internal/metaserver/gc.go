package metaserver

import (
	"context"
	"errors"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// gcBatch bounds the garbage entries one collection round handles.
const gcBatch = 1000

// kickGC wakes the block collector after a commit queued garbage.
func (s *Server) kickGC() {
	select {
	case s.gcCh <- struct{}{}:
	default:
	}
}

// CollectGarbage works through the garbage queue until it is empty or an
// object store fails (the entries then stay queued for the next round). It
// deletes the objects of deleted files' blocks from their buckets; entries
// are queued by committed commands only, so an object is never deleted
// before the deletion that freed it is durable.
func (s *Server) CollectGarbage(ctx context.Context) error {
	for s.isLeader() {
		var items []namespace.GarbageItem
		if err := s.store.View(func(r kv.Reader) (err error) {
			items, err = namespace.GarbageBatch(r, gcBatch)
			return err
		}); err != nil || len(items) == 0 {
			return err
		}
		var done [][]byte
		var failed error
		for _, it := range items {
			if err := s.collect(ctx, it); err != nil {
				failed = errors.Join(failed, err)
				continue
			}
			done = append(done, it.Key)
		}
		if len(done) > 0 {
			if _, err := s.propose(ctx, statemachine.GarbageDone.Command(&pb.GarbageDoneCommand{Keys: done})); err != nil {
				return err
			}
		}
		if failed != nil {
			return failed
		}
	}
	return nil
}

// collect deletes one entry's object, or the orphans of one file.
func (s *Server) collect(ctx context.Context, it namespace.GarbageItem) error {
	if it.StoreURI == "" {
		return nil // a namespace without a bucket holds no objects
	}
	store, err := s.stores.Get(ctx, it.StoreURI)
	if err != nil {
		return err
	}
	if it.Block != 0 {
		return store.Delete(ctx, blocks.ObjectKey(it.Inode, it.Block))
	}
	var keep map[uint64]bool
	if err := s.store.View(func(r kv.Reader) (err error) {
		keep, _, err = namespace.CommittedBlocks(r, it.Inode)
		return err
	}); err != nil {
		return err
	}
	return deleteOrphans(ctx, store, it.Inode, keep)
}

// deleteOrphans deletes the objects of file inode that keep does not name.
func deleteOrphans(ctx context.Context, store object.Store, inode uint64, keep map[uint64]bool) error {
	prefix, after := blocks.ObjectPrefix(inode), ""
	for {
		page, err := store.List(ctx, prefix, after, 1000)
		if err != nil {
			return err
		}
		for _, info := range page {
			if id, ok := blocks.ParseObjectKey(inode, info.Key); ok && !keep[id] {
				if err := store.Delete(ctx, info.Key); err != nil {
					return err
				}
			}
		}
		if len(page) < 1000 {
			return nil
		}
		after = page[len(page)-1].Key
	}
}
