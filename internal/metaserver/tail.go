package metaserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/object"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Files being written that were flushed keep the bytes after their blocks
// (their tail) in the state, until a block holds them. Closing such a file
// without its writer (lease recovery, a lease expired or taken over) makes
// the tail a block first: the leader uploads it to the namespace's bucket
// as any block, and the command that closes the file commits it.

// recoverAttempts bounds how often RecoverLease makes a tail block again
// when the writer flushed more meanwhile.
const recoverAttempts = 3

// recoverLease carries out a RecoverLease: the file's tail made a block,
// then the command, again if the writer flushed more meanwhile.
func (m *Member) recoverLease(ctx context.Context, r *pb.RecoverLeaseRequest) (*pb.RecoverLeaseResponse, error) {
	if r.GetTailBlock() != nil {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "recoverLease %s: a tail block is the service's to set", r.GetPath())
	}
	if err := m.tokens.CheckCaller(ctx, r.GetHeader()); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		req := proto.CloneOf(r)
		var err error
		if req.TailBlock, err = m.leases.tailBlockOf(ctx, r.GetHeader(), r.GetPath()); err != nil {
			return nil, err
		}
		resp, err := mutate(ctx, m, sm.RecoverLease, req)
		if err != nil || resp.Closed || attempt == recoverAttempts-1 {
			return resp, err
		}
	}
}

// tailBlockOf makes a block of the flushed tail of the file at path, if it
// has one.
func (m *leases) tailBlockOf(ctx context.Context, h *pb.Header, path string) (*pb.Block, error) {
	var ino uint64
	err := m.core.View(ctx, func(r kv.Reader) error {
		id, holder, err := m.core.machine.Writer(r, sm.CallerOf(h), h.GetNamespace(), path)
		if holder != "" {
			ino = id
		}
		return err
	})
	if err != nil || ino == 0 {
		return nil, err
	}
	return m.tailBlock(ctx, h.GetNamespace(), ino)
}

// tailBlock uploads the flushed tail of file ino of namespace ns, if it
// has one, as a block, and returns it.
func (m *leases) tailBlock(ctx context.Context, ns string, ino uint64) (*pb.Block, error) {
	var end uint64
	var data []byte
	var uri string
	err := m.core.View(ctx, func(r kv.Reader) error {
		rec, err := sm.NamespaceRecord(r, ns)
		if err != nil {
			return err
		}
		uri = rec.StoreURI
		end, data, err = sm.Tail(r, ino)
		return err
	})
	if err != nil || len(data) == 0 {
		return nil, err
	}
	store, err := m.stores.Get(ctx, uri)
	if err != nil {
		return nil, err
	}
	id := blocks.NewID()
	key := blocks.ObjectKey(ino, id)
	if err := object.PutParallel(ctx, store, key, bytes.NewReader(data), int64(len(data)), object.ParallelOptions{}); err != nil {
		return nil, fmt.Errorf("make a block of the flushed tail of inode %d: %w", ino, err)
	}
	return &pb.Block{BlockId: id, Offset: end, Length: uint64(len(data))}, nil
}

// expire closes file ino that holder stopped writing, with its tail made a
// block.
func (m *leases) expire(ctx context.Context, holder string, ino uint64) error {
	ns, err := m.namespaceOf(ino)
	if err != nil {
		return err
	}
	var tail *pb.Block
	if ns != "" {
		if tail, err = m.tailBlock(ctx, ns, ino); err != nil {
			return err
		}
	}
	_, err = m.core.Propose(ctx, sm.ExpireLease.Command(&pb.ExpireLeaseCommand{Holder: holder, InodeId: ino, TailBlock: tail}))
	return err
}

// namespaceOf names the namespace holding inode ino ("" if it is in none:
// deleted meanwhile, or in a subtree awaiting purge).
func (m *leases) namespaceOf(ino uint64) (string, error) {
	var name string
	err := m.core.Applied(func(r kv.Reader) (err error) {
		name, err = sm.NamespaceOf(r, ino)
		return err
	})
	if errors.Is(err, fserr.ErrNotFound) {
		return "", nil
	}
	return name, err
}
