package raftnode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv/pebblekv"
)

// Log store keys, in the log's own pebble instance:
//
//	"e" index(8)   a log entry (raftpb.Entry, protobuf)
//	"h"            the hard state (raftpb.HardState)
//	"s"            the metadata of the last compaction point (raftpb.Snapshot, no data)
//	"c"            the cluster id
var (
	hardStateKey = []byte("h")
	snapshotKey  = []byte("s")
	clusterKey   = []byte("c")
)

func entryKey(index uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte("e"), index)
}

// logStore persists the Raft log and mirrors its live tail in a
// raft.MemoryStorage, which is what the raft library reads.
type logStore struct {
	db  *pebble.DB
	mem *raft.MemoryStorage
	// first and last are the indexes of the first and last entries on
	// disk (owned by the node loop); the first ones may precede the
	// compaction point.
	first, last uint64
	// hs is the hard state last saved (owned by the node loop). NB: not
	// mem's InitialState, which raft's goroutine updates unlocked.
	hs    *pb.HardState
	syncs atomic.Int64 // the writes synced so far (tests read it)
}

func openLogStore(dir string) (*logStore, bool, error) {
	db, err := pebblekv.OpenDB(dir, 16<<20, 64<<20, nil)
	if err != nil {
		return nil, false, err
	}
	ls := &logStore{db: db, mem: raft.NewMemoryStorage()}
	existed, err := ls.load()
	if err != nil {
		db.Close()
		return nil, false, err
	}
	return ls, existed, nil
}

// load fills the memory storage from disk and reports whether a log existed.
func (ls *logStore) load() (bool, error) {
	snap := &pb.Snapshot{}
	found, err := ls.getProto(snapshotKey, snap)
	if err != nil {
		return false, err
	}
	if found {
		if err := ls.mem.ApplySnapshot(snap); err != nil {
			return false, err
		}
	}
	hs := &pb.HardState{}
	foundHS, err := ls.getProto(hardStateKey, hs)
	if err != nil {
		return false, err
	}
	ls.hs = hs
	if foundHS {
		if err := ls.mem.SetHardState(hs); err != nil {
			return false, err
		}
	}
	entries, err := ls.loadEntries(snap.GetMetadata().GetIndex() + 1)
	if err != nil {
		return false, err
	}
	ls.last = snap.GetMetadata().GetIndex()
	if len(entries) > 0 {
		ls.last = entries[len(entries)-1].GetIndex()
	}
	if ls.first, err = ls.firstOnDisk(); err != nil {
		return false, err
	}
	return found || foundHS || len(entries) > 0, ls.mem.Append(entries)
}

func (ls *logStore) loadEntries(from uint64) ([]*pb.Entry, error) {
	it, err := ls.db.NewIter(&pebble.IterOptions{LowerBound: entryKey(from), UpperBound: []byte("f")})
	if err != nil {
		return nil, err
	}
	var out []*pb.Entry
	for ok := it.First(); ok; ok = it.Next() {
		e := &pb.Entry{}
		if err := proto.Unmarshal(it.Value(), e); err != nil {
			it.Close()
			return nil, err
		}
		out = append(out, e)
	}
	return out, errors.Join(it.Error(), it.Close())
}

func (ls *logStore) firstOnDisk() (uint64, error) {
	it, err := ls.db.NewIter(&pebble.IterOptions{LowerBound: entryKey(0), UpperBound: []byte("f")})
	if err != nil {
		return 0, err
	}
	var first uint64
	if it.First() {
		first = binary.BigEndian.Uint64(it.Key()[1:])
	}
	return first, errors.Join(it.Error(), it.Close())
}

// checkCluster records the cluster id in a new log and refuses a log of
// another cluster.
func (ls *logStore) checkCluster(id string) error {
	v, closer, err := ls.db.Get(clusterKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return ls.db.Set(clusterKey, []byte(id), pebble.Sync)
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	if string(v) != id {
		return fmt.Errorf("raftnode: this member's log belongs to cluster %q, not %q: a member's data directory cannot move to another cluster", v, id)
	}
	return nil
}

func (ls *logStore) getProto(key []byte, m proto.Message) (bool, error) {
	v, closer, err := ls.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer closer.Close()
	return true, proto.Unmarshal(v, m)
}

// save durably appends entries and records the hard state, as a Ready
// requires before its messages are sent or its entries applied.
func (ls *logStore) save(hs *pb.HardState, entries []*pb.Entry, sync bool) error {
	if len(entries) == 0 && raft.IsEmptyHardState(hs) {
		return nil
	}
	b := ls.db.NewBatch()
	defer b.Close()
	// New entries replace any conflicting suffix of the log. NB: delete
	// only a suffix that exists: a range deletion per append would pile up
	// overlapping tombstones that pebble fragments quadratically.
	if len(entries) > 0 && entries[0].GetIndex() <= ls.last {
		if err := b.DeleteRange(entryKey(entries[0].GetIndex()), entryKey(ls.last+1), nil); err != nil {
			return err
		}
	}
	for _, e := range entries {
		data, err := proto.Marshal(e)
		if err != nil {
			return err
		}
		if err := b.Set(entryKey(e.GetIndex()), data, nil); err != nil {
			return err
		}
	}
	if !raft.IsEmptyHardState(hs) {
		data, err := proto.Marshal(hs)
		if err != nil {
			return err
		}
		if err := b.Set(hardStateKey, data, nil); err != nil {
			return err
		}
	}
	opts := pebble.NoSync
	if sync {
		opts = pebble.Sync
		ls.syncs.Add(1)
	}
	if err := b.Commit(opts); err != nil {
		return err
	}
	if !raft.IsEmptyHardState(hs) {
		if err := ls.mem.SetHardState(hs); err != nil {
			return err
		}
		ls.hs = hs
	}
	if len(entries) > 0 {
		if ls.first == 0 {
			ls.first = entries[0].GetIndex()
		}
		ls.last = entries[len(entries)-1].GetIndex()
	}
	return ls.mem.Append(entries)
}

// sync makes everything written to the log durable (volatile entries
// written without a sync included): a record of no consequence, synced.
func (ls *logStore) sync() error {
	ls.syncs.Add(1)
	return ls.db.LogData(nil, pebble.Sync)
}

// compact moves the compaction point to index, which the state machine has
// made durable, with membership cs, and drops the entries more than keep
// behind it (followers that lag less catch up from the log, not from a
// snapshot).
func (ls *logStore) compact(index, keep uint64, cs *pb.ConfState) error {
	snap, err := ls.mem.CreateSnapshot(index, cs, nil)
	if err != nil {
		return err
	}
	cut := index - min(keep, index)
	if err := ls.writeSnapshot(snap, cut); err != nil {
		return err
	}
	if first, _ := ls.mem.FirstIndex(); cut >= first {
		return ls.mem.Compact(cut)
	}
	return nil
}

// installSnapshot makes a received snapshot the start of the log: every
// entry before it goes.
func (ls *logStore) installSnapshot(snap *pb.Snapshot) error {
	if err := ls.writeSnapshot(snap, ls.last); err != nil {
		return err
	}
	ls.first, ls.last = 0, snap.GetMetadata().GetIndex()
	return ls.mem.ApplySnapshot(snap)
}

// writeSnapshot durably records snap as the compaction point and deletes
// the entries on disk up to and including cut.
func (ls *logStore) writeSnapshot(snap *pb.Snapshot, cut uint64) error {
	data, err := proto.Marshal(snap)
	if err != nil {
		return err
	}
	b := ls.db.NewBatch()
	defer b.Close()
	if err := b.Set(snapshotKey, data, nil); err != nil {
		return err
	}
	if ls.first != 0 && ls.first <= cut {
		if err := b.DeleteRange(entryKey(ls.first), entryKey(cut+1), nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	if ls.first <= cut {
		ls.first = cut + 1
	}
	return nil
}

// bootstrap starts a new log whose first compaction point already holds the
// initial membership, so that no configuration entry has to be applied
// before the first election: a lone member leads at once.
func (ls *logStore) bootstrap(peers []uint64) error { return ls.bootstrapAt(peers, 1) }

// bootstrapAt starts a new log of a group of peers after index, as after a
// snapshot there (term 1: the group's first).
func (ls *logStore) bootstrapAt(peers []uint64, index uint64) error {
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{
		Index: proto.Uint64(index), Term: proto.Uint64(1), ConfState: &pb.ConfState{Voters: peers}}}
	data, err := proto.Marshal(snap)
	if err != nil {
		return err
	}
	if err := ls.db.Set(snapshotKey, data, pebble.Sync); err != nil {
		return err
	}
	return ls.mem.ApplySnapshot(snap)
}

func (ls *logStore) close() error { return ls.db.Close() }
