package namespace_test

import (
	"encoding/binary"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// mutator is what the differential test changes the namespace through:
// *namespace.FS itself, or commands applied by the service's state machine.
type mutator interface {
	Mkdirs(tx kv.Txn, now int64, c namespace.Caller, ns, path string, perm, umask uint16, parents bool) (bool, error)
	Create(tx kv.Txn, now int64, c namespace.Caller, ns, path string, o namespace.CreateOptions) (*kvschema.Inode, error)
	Complete(tx kv.Txn, now int64, c namespace.Caller, ns, path string, o namespace.CompleteOptions) error
	Delete(tx kv.Txn, now int64, c namespace.Caller, ns, path string, recursive bool) (bool, error)
	Rename(tx kv.Txn, now int64, c namespace.Caller, ns, src, dst string, o namespace.RenameOptions) (string, error)
	SetPermission(tx kv.Txn, c namespace.Caller, ns, path string, perm uint16) error
	SetOwner(tx kv.Txn, c namespace.Caller, ns, path, owner, group string) error
	SetTimes(tx kv.Txn, c namespace.Caller, ns, path string, mtime, atime int64) error
	RecoverLease(tx kv.Txn, now int64, c namespace.Caller, ns, path string, tail *kvschema.Block) (bool, error)
	ExpireLease(tx kv.Txn, holder string, ino uint64, tail *kvschema.Block) error
}

// TestDifferentialThroughCommands runs the differential test with every
// mutation made as the service makes it: a command of the Raft log, with a
// request id, applied by statemachine.Machine. Now and then a command is
// applied a second time, as a client's retry, which must answer the same
// and change nothing.
func TestDifferentialThroughCommands(t *testing.T) {
	runDifferential(t, []uint64{11, 12, 13, 14}, func(d *diff) mutator {
		return &commands{d: d, m: statemachine.New(d.cfg)}
	})
}

// commands makes each mutation a command for the state machine.
type commands struct {
	d    *diff
	m    *statemachine.Machine
	next uint64 // request ids
}

// apply applies the command of op for request r, whose header h it gives a
// request id, and now and then its retry, which must give the same result.
func (c *commands) apply(tx kv.Txn, now int64, op *statemachine.Op, h *pb.Header, r proto.Message) (statemachine.Result, error) {
	c.next++
	h.RequestId, h.FirstAttempt = binary.BigEndian.AppendUint64([]byte("diff"), c.next), c.d.rng.IntN(2) == 0
	cmd := op.Command(r)
	cmd.Now, cmd.Settings = now, c.m.Settings()
	res, err := c.m.Apply(tx.(*kv.Overlay), cmd)
	if err != nil {
		c.d.fatalf("%s: the state machine failed: %v", op.Name, err)
	}
	if c.d.rng.IntN(8) == 0 {
		h.FirstAttempt = false
		again, err := c.m.Apply(tx.(*kv.Overlay), cmd)
		if err != nil || !sameResult(res[0], again[0]) {
			c.d.fatalf("%s retried: %+v (%v), first %+v", op.Name, again, err, res)
		}
	}
	return res[0], res[0].Err
}

func sameResult(a, b statemachine.Result) bool {
	return errClass(a.Err) == errClass(b.Err) && reflect.DeepEqual(a.Value(), b.Value())
}

func header(c namespace.Caller, ns string) *pb.Header {
	return &pb.Header{User: c.User, Groups: c.Groups, Namespace: ns}
}

func (c *commands) Mkdirs(tx kv.Txn, now int64, cl namespace.Caller, ns, path string, perm, umask uint16, parents bool) (bool, error) {
	h := header(cl, ns)
	r, err := c.apply(tx, now, statemachine.Mkdirs.Op, h, &pb.MkdirsRequest{Header: h, Path: path,
		Permission: uint32(perm), Umask: uint32(umask), CreateParents: parents})
	return statemachine.Mkdirs.Result(r), err
}

func (c *commands) Create(tx kv.Txn, now int64, cl namespace.Caller, ns, path string, o namespace.CreateOptions) (*kvschema.Inode, error) {
	h := header(cl, ns)
	h.ClientName = o.Holder
	r, err := c.apply(tx, now, statemachine.Create.Op, h, &pb.CreateRequest{Header: h, Path: path,
		Permission: uint32(o.Perm), Umask: uint32(o.Umask), Overwrite: o.Overwrite, CreateParents: o.Parents,
		Replication: o.Replication, BlockSize: o.BlockSize, Complete: o.Closed, InlineData: o.Data})
	return statemachine.Create.Result(r), err
}

func (c *commands) Complete(tx kv.Txn, now int64, cl namespace.Caller, ns, path string, o namespace.CompleteOptions) error {
	h := header(cl, ns)
	h.ClientName = o.Holder
	req := &pb.CompleteRequest{Header: h, Path: path, InodeId: o.Inode, Length: o.Length, Inline: o.Inline,
		InlineData: o.Data}
	for _, b := range o.Blocks {
		req.Blocks = append(req.Blocks, &pb.Block{BlockId: b.ID, Offset: b.Offset, Length: b.Length})
	}
	_, err := c.apply(tx, now, statemachine.Complete.Op, h, req)
	return err
}

func (c *commands) Delete(tx kv.Txn, now int64, cl namespace.Caller, ns, path string, recursive bool) (bool, error) {
	h := header(cl, ns)
	r, err := c.apply(tx, now, statemachine.Delete.Op, h, &pb.DeleteRequest{Header: h, Path: path, Recursive: recursive})
	return statemachine.Delete.Result(r), err
}

func (c *commands) Rename(tx kv.Txn, now int64, cl namespace.Caller, ns, src, dst string, o namespace.RenameOptions) (string, error) {
	h := header(cl, ns)
	r, err := c.apply(tx, now, statemachine.Rename.Op, h, &pb.RenameRequest{Header: h, Src: src, Dst: dst,
		Overwrite: o.Overwrite, NoDescend: o.NoDescend})
	return statemachine.Rename.Result(r), err
}

func (c *commands) SetPermission(tx kv.Txn, cl namespace.Caller, ns, path string, perm uint16) error {
	h := header(cl, ns)
	_, err := c.apply(tx, c.d.now, statemachine.SetPermission.Op, h,
		&pb.SetPermissionRequest{Header: h, Path: path, Permission: uint32(perm)})
	return err
}

func (c *commands) SetOwner(tx kv.Txn, cl namespace.Caller, ns, path, owner, group string) error {
	h := header(cl, ns)
	_, err := c.apply(tx, c.d.now, statemachine.SetOwner.Op, h, &pb.SetOwnerRequest{Header: h, Path: path, Owner: owner, Group: group})
	return err
}

func (c *commands) SetTimes(tx kv.Txn, cl namespace.Caller, ns, path string, mtime, atime int64) error {
	h := header(cl, ns)
	_, err := c.apply(tx, c.d.now, statemachine.SetTimes.Op, h,
		&pb.SetTimesRequest{Header: h, Path: path, ModificationTime: mtime, AccessTime: atime})
	return err
}

func (c *commands) RecoverLease(tx kv.Txn, now int64, cl namespace.Caller, ns, path string, _ *kvschema.Block) (bool, error) {
	h := header(cl, ns)
	r, err := c.apply(tx, now, statemachine.RecoverLease.Op, h, &pb.RecoverLeaseRequest{Header: h, Path: path})
	return statemachine.RecoverLease.Result(r), err
}

// ExpireLease is the service's own command: no header, no request id.
func (c *commands) ExpireLease(tx kv.Txn, holder string, ino uint64, _ *kvschema.Block) error {
	cmd := statemachine.ExpireLease.Command(&pb.ExpireLeaseCommand{Holder: holder, InodeId: ino})
	cmd.Now, cmd.Settings = c.d.now, c.m.Settings()
	res, err := c.m.Apply(tx.(*kv.Overlay), cmd)
	if err != nil {
		c.d.fatalf("ExpireLease: the state machine failed: %v", err)
	}
	return res[0].Err
}
