package statemachine

import (
	"errors"
	"fmt"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// The membership of the Raft group lives in the state (kvschema member
// records), changed only by applied configuration changes, so that every
// member and every snapshot agree on it.

// applyConfChange records a membership change in tx; it returns the
// change's id and the members it removed.
func applyConfChange(tx kv.Txn, e *raftpb.Entry) (id uint64, removed []uint64, err error) {
	cc := &raftpb.ConfChange{}
	if err := proto.Unmarshal(e.GetData(), cc); err != nil {
		return 0, nil, fmt.Errorf("conf change at %d: %w", e.GetIndex(), err)
	}
	switch cc.GetType() {
	case raftpb.ConfChangeType_ConfChangeAddNode, raftpb.ConfChangeType_ConfChangeAddLearnerNode:
		m := kvschema.Member{ID: cc.GetNodeId(), Address: string(cc.GetContext()),
			Learner: cc.GetType() == raftpb.ConfChangeType_ConfChangeAddLearnerNode}
		tx.Set(kvschema.MemberKey(m.ID), kvschema.EncodeMember(m))
	case raftpb.ConfChangeType_ConfChangeRemoveNode:
		tx.Delete(kvschema.MemberKey(cc.GetNodeId()))
		removed = append(removed, cc.GetNodeId())
	}
	return cc.GetId(), removed, nil
}

// Members returns the members recorded in the state, by id.
func Members(r kv.Reader) (map[uint64]kvschema.Member, error) {
	members := map[uint64]kvschema.Member{}
	start, end := kvschema.MemberRange()
	var derr error
	err := r.Scan(start, end, func(k, v []byte) bool {
		var m kvschema.Member
		if m, derr = kvschema.DecodeMember(k, v); derr != nil {
			return false
		}
		members[m.ID] = m
		return true
	})
	return members, errors.Join(err, derr)
}

// Bootstrap records the initial members of a new group in tx. Every
// initial member does the same from the same flags, so their states agree
// before the first entry.
func Bootstrap(tx kv.Txn, initial map[uint64]string) error {
	for id, addr := range initial {
		if id == 0 {
			return fmt.Errorf("statemachine: member id 0 is not allowed")
		}
		tx.Set(kvschema.MemberKey(id), kvschema.EncodeMember(kvschema.Member{ID: id, Address: addr}))
	}
	return nil
}

// Rebase makes the state in tx, read through r, that of a new group of the
// initial members: the members recorded are replaced, and the last applied
// entry's term becomes 1, the new group's first (metaserver.RestoreBackup).
// It returns the applied index, where the new group's log starts.
func Rebase(tx kv.Txn, r kv.Reader, initial map[uint64]string) (uint64, error) {
	index, err := AppliedIndex(r)
	if err != nil || index == 0 {
		return 0, errors.Join(err, errors.New("statemachine: the state has applied nothing: not a backup"))
	}
	old, err := Members(r)
	if err != nil {
		return 0, err
	}
	for id := range old {
		tx.Delete(kvschema.MemberKey(id))
	}
	SetApplied(tx, index, 1)
	return index, Bootstrap(tx, initial)
}

// SetApplied records index and term as the last applied entry's.
func SetApplied(tx kv.Txn, index, term uint64) {
	tx.Set(kvschema.AppliedKey, kvschema.EncodeUint64s(index, term))
}

// AppliedIndex returns the index of the last entry applied to the state in
// r (0 for a new state).
func AppliedIndex(r kv.Reader) (uint64, error) {
	v, ok, err := r.Get(kvschema.AppliedKey)
	if err != nil || !ok {
		return 0, err
	}
	vs, err := kvschema.DecodeUint64s(v, 2)
	if err != nil {
		return 0, err
	}
	return vs[0], nil
}
