package metaserver

import (
	"errors"
	"fmt"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// result is what applying one command produced, for the proposer.
type result struct {
	val any
	err error
}

// Apply implements raftnode.StateMachine: it applies a run of committed
// entries as one atomic batch (one commit however many entries), rolling
// back each command that fails, so that it leaves nothing behind.
func (s *Server) Apply(entries []*raftpb.Entry) error {
	for len(entries) > 0 && entries[0].GetIndex() <= s.applied.Load() {
		entries = entries[1:] // applied before a restart, or in a restored snapshot
	}
	if len(entries) == 0 {
		return nil
	}
	group := kv.NewOverlay(s.store.Writer())
	type done struct {
		id  uint64
		res result
	}
	var finished []done
	var k kicks
	membersChanged, removed := false, false
	for _, e := range entries {
		if e.GetType() == raftpb.EntryType_EntryConfChange {
			self, id, err := s.applyConfChange(group, e)
			if err != nil {
				return err
			}
			membersChanged, removed = true, removed || self
			finished = append(finished, done{id, result{}})
			continue
		}
		if e.GetType() != raftpb.EntryType_EntryNormal || len(e.GetData()) == 0 {
			continue
		}
		cmd := &pb.Command{}
		if err := proto.Unmarshal(e.GetData(), cmd); err != nil {
			return fmt.Errorf("entry %d: %w", e.GetIndex(), err)
		}
		res, err := s.applyEntry(group, cmd, &k)
		if err != nil {
			return fmt.Errorf("entry %d: %w", e.GetIndex(), err)
		}
		finished = append(finished, done{cmd.GetId(), res})
	}
	last := entries[len(entries)-1]
	group.Set(kvschema.AppliedKey, kvschema.EncodeUint64s(last.GetIndex(), last.GetTerm()))
	if err := s.store.Commit(group, false); err != nil {
		return err
	}
	s.applied.Store(last.GetIndex())
	if membersChanged {
		if err := s.loadMembers(); err != nil {
			return err
		}
	}
	for _, d := range finished {
		s.deliver(d.id, d.res)
	}
	if removed {
		s.node.Fail(fmt.Errorf("member %d was removed from the group", s.cfg.MemberID))
	}
	if k.purge {
		s.kickPurge()
	}
	if k.gc {
		s.kickGC()
	}
	return nil
}

// kicks records what the applied commands left for the background work.
type kicks struct{ purge, gc bool }

// applyEntry applies the command of one entry: a group's commands each as
// if it came alone, in order, with the group's time and settings; the
// result of a group is a []result. Only a failure of the state machine
// itself is an error.
func (s *Server) applyEntry(group *kv.Overlay, cmd *pb.Command, k *kicks) (result, error) {
	g := cmd.GetGroup()
	if g == nil {
		return s.applyCommand(group, cmd, k)
	}
	rs := make([]result, len(g.GetCommands()))
	for i, c := range g.GetCommands() {
		c.Now, c.Settings = cmd.GetNow(), cmd.GetSettings()
		r, err := s.applyCommand(group, c, k)
		if err != nil {
			return result{}, err
		}
		rs[i] = r
	}
	return result{val: rs}, nil
}

// applyCommand applies one command to the group's overlay, rolling its
// writes back if it fails, so that a failed one leaves nothing behind.
func (s *Server) applyCommand(group *kv.Overlay, cmd *pb.Command, k *kicks) (result, error) {
	group.Mark()
	val, err := s.executeOnce(group, cmd)
	if err != nil && !isOutcome(err) {
		return result{}, err
	}
	if err != nil {
		group.Rollback()
	} else {
		k.purge = k.purge || cmd.GetDelete() != nil || cmd.GetDeleteNamespace() != nil
		k.gc = k.gc || freesBlocks(cmd)
	}
	return result{val, err}, nil
}

// executeOnce applies cmd unless its request id was applied before, in
// which case it returns the answer kept from then (the lookup is skipped
// for a request the client marks as its first attempt). A command that failed
// changed nothing and kept nothing, so its retry simply runs again.
func (s *Server) executeOnce(tx kv.Txn, cmd *pb.Command) (any, error) {
	h := requestHeader(cmd)
	rid := h.GetRequestId()
	if len(rid) == 0 {
		return s.execute(tx, cmd)
	}
	// A first attempt was never sent before, so no earlier entry holds it.
	if !h.GetFirstAttempt() {
		a, ok, err := findAnswer(tx, cmd.GetNow(), rid)
		if err != nil || ok {
			return answerValue(a), err
		}
	}
	val, err := s.execute(tx, cmd)
	if err != nil {
		return val, err
	}
	tx.Set(kvschema.RequestKey(cmd.GetNow(), rid), kvschema.EncodeAnswer(keptAnswer(cmd.GetNow(), val)))
	return val, nil
}

// findAnswer looks for the answer kept for request rid in every minute it
// may be kept under at time now: the last requestMemory, and as much again
// on either side for leaders whose clocks disagree.
func findAnswer(r kv.Reader, now int64, rid []byte) (kvschema.Answer, bool, error) {
	memory := requestMemory.Milliseconds()
	for at := now + memory; at >= now-2*memory; at -= kvschema.RequestMinute {
		v, ok, err := r.Get(kvschema.RequestKey(at, rid))
		if err != nil {
			return kvschema.Answer{}, false, err
		}
		if !ok {
			continue
		}
		a, err := kvschema.DecodeAnswer(v)
		if err != nil {
			return kvschema.Answer{}, false, fmt.Errorf("answer of request %x: %w", rid, err)
		}
		return a, true, nil
	}
	return kvschema.Answer{}, false, nil
}

// requestHeader returns the header of a client's command (nil for the
// service's own commands). A create, the most frequent, is found without
// reflection, which took 3% of its apply (BenchmarkApplyCreates).
func requestHeader(cmd *pb.Command) *pb.Header {
	if c := cmd.GetCreate(); c != nil {
		return c.GetHeader()
	}
	m := cmd.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("op"))
	if fd == nil || fd.Message() == nil {
		return nil
	}
	if h, ok := m.Get(fd).Message().Interface().(interface{ GetHeader() *pb.Header }); ok {
		return h.GetHeader()
	}
	return nil
}

func keptAnswer(now int64, val any) kvschema.Answer {
	a := kvschema.Answer{At: now}
	switch v := val.(type) {
	case bool:
		a.Kind, a.Bool = kvschema.AnswerBool, v
	case string:
		a.Kind, a.Text = kvschema.AnswerText, v
	case *kvschema.Inode:
		a.Kind, a.Inode = kvschema.AnswerInode, v
	}
	return a
}

func answerValue(a kvschema.Answer) any {
	switch a.Kind {
	case kvschema.AnswerBool:
		return a.Bool
	case kvschema.AnswerText:
		return a.Text
	case kvschema.AnswerInode:
		return a.Inode
	}
	return nil
}

// freesBlocks tells the commands that may queue block garbage.
func freesBlocks(cmd *pb.Command) bool {
	switch cmd.GetOp().(type) {
	case *pb.Command_Delete, *pb.Command_Create, *pb.Command_Rename, *pb.Command_Purge,
		*pb.Command_ExpireLease, *pb.Command_RecoverLease, *pb.Command_DeleteNamespace:
		return true
	}
	return false
}

// Sync implements raftnode.StateMachine.
func (s *Server) Sync() error { return s.store.Sync() }

// Checkpoint implements raftnode.StateMachine.
func (s *Server) Checkpoint(dir string) error { return s.store.Checkpoint(dir) }

// Restore implements raftnode.StateMachine: the state becomes the received
// checkpoint, with its applied index and membership.
func (s *Server) Restore(dir string) error {
	if err := s.store.Replace(dir); err != nil {
		return err
	}
	applied, err := s.appliedIndex()
	if err != nil {
		return err
	}
	s.applied.Store(applied)
	return s.loadMembers()
}

// isOutcome tells an operation's answer (an error the caller gets) from a
// failure of the state machine itself (corrupt state, a store error).
func isOutcome(err error) bool {
	var pe *namespace.PathError
	return errors.As(err, &pe) && !errors.Is(err, kvschema.ErrCorrupt)
}

func caller(h *pb.Header) namespace.Caller {
	return namespace.Caller{User: h.GetUser(), Groups: h.GetGroups()}
}

// execute applies one command. It must be deterministic: everything it
// uses besides the state is in the command.
func (s *Server) execute(tx kv.Txn, cmd *pb.Command) (any, error) {
	now, fs := cmd.GetNow(), s.fsOf(cmd.GetSettings())
	switch op := cmd.GetOp().(type) {
	case *pb.Command_Mkdirs:
		r := op.Mkdirs
		return fs.Mkdirs(tx, now, caller(r.Header), r.Header.GetNamespace(), r.Path, perm(r.Permission), perm(r.Umask), r.CreateParents)
	case *pb.Command_Create:
		r := op.Create
		return fs.Create(tx, now, caller(r.Header), r.Header.GetNamespace(), r.Path, namespace.CreateOptions{
			Perm: perm(r.Permission), Umask: perm(r.Umask), Overwrite: r.Overwrite, Parents: r.CreateParents,
			Replication: r.Replication, BlockSize: r.BlockSize, Holder: r.Header.GetClientName(),
			Closed: r.Complete, Data: r.InlineData})
	case *pb.Command_Complete:
		r := op.Complete
		return nil, fs.Complete(tx, now, caller(r.Header), r.Header.GetNamespace(), r.Path, namespace.CompleteOptions{
			Inode: r.InodeId, Holder: r.Header.GetClientName(), Length: r.Length, Blocks: blocksFromProto(r.Blocks),
			Inline: r.Inline, Data: r.InlineData})
	case *pb.Command_Rename:
		r := op.Rename
		return fs.Rename(tx, now, caller(r.Header), r.Header.GetNamespace(), r.Src, r.Dst,
			namespace.RenameOptions{Overwrite: r.Overwrite, NoDescend: r.NoDescend})
	case *pb.Command_Delete:
		r := op.Delete
		return fs.DeleteInode(tx, now, caller(r.Header), r.Header.GetNamespace(), r.Path, r.Recursive, r.InodeId)
	default:
		return s.executeAttr(fs, tx, cmd)
	}
}

func (s *Server) executeAttr(fs *namespace.FS, tx kv.Txn, cmd *pb.Command) (any, error) {
	switch op := cmd.GetOp().(type) {
	case *pb.Command_SetPermission:
		r := op.SetPermission
		return nil, fs.SetPermission(tx, caller(r.Header), r.Header.GetNamespace(), r.Path, perm(r.Permission))
	case *pb.Command_SetOwner:
		r := op.SetOwner
		return nil, fs.SetOwner(tx, caller(r.Header), r.Header.GetNamespace(), r.Path, r.Owner, r.Group)
	case *pb.Command_SetTimes:
		r := op.SetTimes
		return nil, fs.SetTimes(tx, caller(r.Header), r.Header.GetNamespace(), r.Path, r.ModificationTime, r.AccessTime)
	default:
		return s.executeAdmin(fs, tx, cmd)
	}
}

func (s *Server) executeAdmin(fs *namespace.FS, tx kv.Txn, cmd *pb.Command) (any, error) {
	switch op := cmd.GetOp().(type) {
	case *pb.Command_RecoverLease:
		r := op.RecoverLease
		return fs.RecoverLease(tx, cmd.GetNow(), caller(r.Header), r.Header.GetNamespace(), r.Path)
	case *pb.Command_ExpireLease:
		return nil, fs.ExpireLease(tx, op.ExpireLease.Holder, op.ExpireLease.InodeId)
	case *pb.Command_Purge:
		return namespace.Purge(tx, int(op.Purge.Limit))
	case *pb.Command_GarbageDone:
		return nil, namespace.GarbageDone(tx, op.GarbageDone.Keys)
	case *pb.Command_ForgetRequests:
		return forgetRequests(tx, op.ForgetRequests.Before, int(op.ForgetRequests.Limit))
	case *pb.Command_CreateNamespace:
		r := op.CreateNamespace
		info := r.GetNamespace()
		return nil, fs.CreateNamespace(tx, cmd.GetNow(), caller(r.Header), kvschema.Namespace{
			Name: info.GetName(), Mode: uint8(info.GetMode()), StoreURI: info.GetStoreUri()})
	case *pb.Command_DeleteNamespace:
		r := op.DeleteNamespace
		return nil, fs.DeleteNamespace(tx, caller(r.Header), r.Name)
	}
	return nil, fmt.Errorf("unknown command %T", cmd.GetOp())
}

func perm(p uint32) uint16 { return uint16(p & 0o7777) }

func blocksFromProto(bs []*pb.Block) []kvschema.Block {
	out := make([]kvschema.Block, len(bs))
	for i, b := range bs {
		out[i] = kvschema.Block{ID: b.BlockId, Offset: b.Offset, Length: b.Length}
	}
	return out
}

// fsOf returns the namespace operations with the settings a command was
// proposed with; entries older than the settings field use this member's.
func (s *Server) fsOf(st *pb.NamespaceSettings) *namespace.FS {
	if st == nil {
		return s.fs
	}
	if cfg := settingsConfig(st); cfg != s.fs.Config() {
		return namespace.New(cfg)
	}
	return s.fs
}

func settingsOf(c namespace.Config) *pb.NamespaceSettings {
	return &pb.NamespaceSettings{Superuser: c.Superuser, Supergroup: c.Supergroup,
		InlineLimit: uint32(c.InlineLimit), BlockSize: c.BlockSize}
}

func settingsConfig(st *pb.NamespaceSettings) namespace.Config {
	return namespace.Config{Superuser: st.Superuser, Supergroup: st.Supergroup,
		InlineLimit: int(st.InlineLimit), BlockSize: st.BlockSize}
}
