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
	"github.com/stratafs/strata/internal/namespace"
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

// RecoverLease implements MetaService.
func (s *Server) RecoverLease(ctx context.Context, r *pb.RecoverLeaseRequest) (*pb.RecoverLeaseResponse, error) {
	if r.GetTailBlock() != nil {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "recoverLease %s: a tail block is the service's to set", r.GetPath())
	}
	if err := s.checkCaller(ctx, r.GetHeader()); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		req := proto.Clone(r).(*pb.RecoverLeaseRequest)
		var err error
		if req.TailBlock, err = s.tailBlockOf(ctx, r.GetHeader(), r.GetPath()); err != nil {
			return nil, err
		}
		resp, err := call[*pb.RecoverLeaseResponse](ctx, s, sm.RecoverLease, req)
		if err != nil || resp.Closed || attempt == recoverAttempts-1 {
			return resp, err
		}
	}
}

// tailBlockOf makes a block of the flushed tail of the file at path, if it
// has one.
func (s *Server) tailBlockOf(ctx context.Context, h *pb.Header, path string) (*pb.Block, error) {
	var ino uint64
	err := s.view(ctx, func(r kv.Reader) error {
		n, err := s.machine.FS().Stat(r, caller(h), h.GetNamespace(), path)
		if err == nil && !n.IsDir() && n.Holder != "" {
			ino = n.ID
		}
		return err
	})
	if err != nil || ino == 0 {
		return nil, err
	}
	return s.tailBlock(ctx, h.GetNamespace(), ino)
}

// tailBlock uploads the flushed tail of file ino of namespace ns, if it
// has one, as a block, and returns it.
func (s *Server) tailBlock(ctx context.Context, ns string, ino uint64) (*pb.Block, error) {
	var end uint64
	var data []byte
	var uri string
	err := s.view(ctx, func(r kv.Reader) error {
		rec, err := namespace.Lookup(r, ns)
		if err != nil {
			return err
		}
		uri = rec.StoreURI
		_, end, data, err = namespace.OpenTail(r, ino)
		return err
	})
	if err != nil || len(data) == 0 {
		return nil, err
	}
	store, err := s.stores.Get(ctx, uri)
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
func (s *Server) expire(ctx context.Context, holder string, ino uint64) error {
	ns, err := s.namespaceOf(ino)
	if err != nil {
		return err
	}
	var tail *pb.Block
	if ns != "" {
		if tail, err = s.tailBlock(ctx, ns, ino); err != nil {
			return err
		}
	}
	_, err = s.propose(ctx, sm.ExpireLease.Command(&pb.ExpireLeaseCommand{Holder: holder, InodeId: ino, TailBlock: tail}))
	return err
}

// namespaceOf names the namespace holding inode ino ("" if it is in none:
// deleted meanwhile, or in a subtree awaiting purge).
func (s *Server) namespaceOf(ino uint64) (string, error) {
	var name string
	err := s.store.View(func(r kv.Reader) (err error) {
		name, err = namespace.NamespaceOf(r, ino)
		return err
	})
	if errors.Is(err, namespace.ErrNotFound) {
		return "", nil
	}
	return name, err
}

// Flush implements MetaService.
func (s *Server) Flush(ctx context.Context, r *pb.FlushRequest) (*pb.FlushResponse, error) {
	return call[*pb.FlushResponse](ctx, s, sm.Flush, r)
}

// ReadTail implements MetaService.
func (s *Server) ReadTail(ctx context.Context, r *pb.ReadTailRequest) (*pb.ReadTailResponse, error) {
	return call[*pb.ReadTailResponse](ctx, s, sm.ReadTail, r)
}

// Append implements MetaService.
func (s *Server) Append(ctx context.Context, r *pb.AppendRequest) (*pb.AppendResponse, error) {
	resp, err := call[*pb.AppendResponse](ctx, s, sm.Append, r)
	if err != nil {
		return nil, err
	}
	s.leases.renew(r.GetHeader().GetClientName())
	resp.InlineLimit = uint32(s.cfg.Namespace.InlineLimit)
	if rec := s.namespaceRecord(r.GetHeader()); rec != nil {
		resp.StoreUri = rec.StoreURI
	}
	return resp, s.grant(ctx, r, resp)
}

// Truncate implements MetaService.
func (s *Server) Truncate(ctx context.Context, r *pb.TruncateRequest) (*pb.TruncateResponse, error) {
	return call[*pb.TruncateResponse](ctx, s, sm.Truncate, r)
}
