package metaserver

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// defaultPage is the listing page size when the client leaves it unset;
// maxPage bounds what a client may ask for.
const (
	defaultPage = 1000
	maxPage     = 10000
)

func checkHeader(h *pb.Header) error {
	if h.GetUser() == "" {
		return fserr.ToStatus(fserr.Errorf(fserr.ErrInvalidArgument, "request header has no user"))
	}
	if len(h.GetRequestId()) > kvschema.MaxRequestID {
		return fserr.ToStatus(fserr.Errorf(fserr.ErrInvalidArgument, "request id of %d bytes: at most %d", len(h.GetRequestId()), kvschema.MaxRequestID))
	}
	return nil
}

// mutate proposes cmd on behalf of the caller in h and waits for its result.
// Only the leader proposes; the others answer NOT_LEADER with its address.
func (s *Server) mutate(ctx context.Context, h *pb.Header, cmd *pb.Command) (any, error) {
	if err := checkHeader(h); err != nil {
		return nil, err
	}
	v, err := s.propose(ctx, cmd)
	return v, s.raftError(err)
}

// view runs a read for the caller in h against the applied state, after a
// read barrier that makes it linearizable: only a leader that a quorum
// still follows answers, once it applied everything committed before. (A
// batch passes one barrier for all its reads.)
func (s *Server) view(ctx context.Context, h *pb.Header, fn func(r kv.Reader, c namespace.Caller, ns string) error) error {
	if err := checkHeader(h); err != nil {
		return err
	}
	if !passedBarrier(ctx) {
		if err := s.node.ReadBarrier(ctx); err != nil {
			return s.raftError(err)
		}
	}
	return fserr.ToStatus(s.store.View(func(r kv.Reader) error {
		return fn(r, caller(h), h.GetNamespace())
	}))
}

// A mutation is a call that a batch may carry, which changes the
// namespace: the command it proposes on behalf of the caller in header, and
// how the result of applying it answers the call. err, if set, answers it
// before anything is proposed.
type mutation struct {
	header *pb.Header
	cmd    *pb.Command
	answer func(ctx context.Context, v any, err error) (proto.Message, error)
	err    error
}

// alone makes a mutation as a call of its own.
func alone[T proto.Message](ctx context.Context, s *Server, m mutation) (T, error) {
	var none T
	if m.err != nil {
		return none, m.err
	}
	v, err := s.mutate(ctx, m.header, m.cmd)
	a, err := m.answer(ctx, v, err)
	if err != nil {
		return none, err
	}
	return a.(T), nil
}

// Mkdirs implements MetaService.
func (s *Server) Mkdirs(ctx context.Context, r *pb.MkdirsRequest) (*pb.MkdirsResponse, error) {
	return alone[*pb.MkdirsResponse](ctx, s, mkdirs(r))
}

func mkdirs(r *pb.MkdirsRequest) mutation {
	return mutation{header: r.Header, cmd: &pb.Command{Op: &pb.Command_Mkdirs{Mkdirs: r}},
		answer: answerWith(func(v any) proto.Message { return &pb.MkdirsResponse{Created: v.(bool)} })}
}

// answerWith answers a mutation with what fn makes of the value its apply
// returned, or with the error.
func answerWith(fn func(v any) proto.Message) func(context.Context, any, error) (proto.Message, error) {
	return func(_ context.Context, v any, err error) (proto.Message, error) {
		if err != nil {
			return nil, err
		}
		return fn(v), nil
	}
}

// Create implements MetaService. A file held by a writer that stopped
// renewing for longer than the soft limit is recovered and taken over. A
// complete create holds no lease: nothing is left to renew.
func (s *Server) Create(ctx context.Context, r *pb.CreateRequest) (*pb.CreateResponse, error) {
	return alone[*pb.CreateResponse](ctx, s, s.create(r))
}

func (s *Server) create(r *pb.CreateRequest) mutation {
	m := mutation{header: r.Header, cmd: &pb.Command{Op: &pb.Command_Create{Create: r}}}
	if r.Header.GetClientName() == "" {
		m.err = fserr.ToStatus(fserr.Errorf(fserr.ErrInvalidArgument, "create %s: request header has no client name", r.Path))
	}
	m.answer = func(ctx context.Context, v any, err error) (proto.Message, error) {
		if errors.Is(fserr.FromStatus(err), fserr.ErrLeaseConflict) && r.Overwrite && s.takeOverExpired(ctx, r) {
			v, err = s.mutate(ctx, r.Header, m.cmd)
		}
		if err != nil {
			return nil, err
		}
		resp := &pb.CreateResponse{Status: fileStatus(v.(*kvschema.Inode)), InlineLimit: uint32(s.cfg.Namespace.InlineLimit)}
		if !r.Complete {
			s.leases.renew(r.Header.GetClientName())
			resp.StoreUri = s.storeURI(r.Header)
		}
		return resp, nil
	}
	return m
}

// takeOverExpired closes the file at r.Path if its writer's lease is past
// the soft limit, and reports whether it did.
func (s *Server) takeOverExpired(ctx context.Context, r *pb.CreateRequest) bool {
	var n *kvschema.Inode
	err := s.view(ctx, r.Header, func(rd kv.Reader, c namespace.Caller, ns string) (err error) {
		n, err = s.fs.Stat(rd, c, ns, r.Path)
		return err
	})
	if err != nil || n.Holder == "" || n.Holder == r.Header.GetClientName() ||
		!s.leases.expired(n.Holder, s.cfg.LeaseSoftLimit) {
		return false
	}
	_, err = s.propose(ctx, &pb.Command{Op: &pb.Command_ExpireLease{
		ExpireLease: &pb.ExpireLeaseCommand{Holder: n.Holder, InodeId: n.ID}}})
	return err == nil
}

// Complete implements MetaService.
func (s *Server) Complete(ctx context.Context, r *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	return alone[*pb.CompleteResponse](ctx, s, complete(r))
}

func complete(r *pb.CompleteRequest) mutation {
	return mutation{header: r.Header, cmd: &pb.Command{Op: &pb.Command_Complete{Complete: r}},
		answer: answerWith(func(any) proto.Message { return &pb.CompleteResponse{} })}
}

// Rename implements MetaService.
func (s *Server) Rename(ctx context.Context, r *pb.RenameRequest) (*pb.RenameResponse, error) {
	return alone[*pb.RenameResponse](ctx, s, rename(r))
}

func rename(r *pb.RenameRequest) mutation {
	return mutation{header: r.Header, cmd: &pb.Command{Op: &pb.Command_Rename{Rename: r}},
		answer: answerWith(func(v any) proto.Message { return &pb.RenameResponse{FinalPath: v.(string)} })}
}

// Delete implements MetaService.
func (s *Server) Delete(ctx context.Context, r *pb.DeleteRequest) (*pb.DeleteResponse, error) {
	return alone[*pb.DeleteResponse](ctx, s, deletion(r))
}

func deletion(r *pb.DeleteRequest) mutation {
	return mutation{header: r.Header, cmd: &pb.Command{Op: &pb.Command_Delete{Delete: r}},
		answer: answerWith(func(v any) proto.Message { return &pb.DeleteResponse{Deleted: v.(bool)} })}
}

// SetPermission implements MetaService.
func (s *Server) SetPermission(ctx context.Context, r *pb.SetPermissionRequest) (*pb.SetAttrResponse, error) {
	_, err := s.mutate(ctx, r.Header, &pb.Command{Op: &pb.Command_SetPermission{SetPermission: r}})
	return attrResponse(err)
}

// SetOwner implements MetaService.
func (s *Server) SetOwner(ctx context.Context, r *pb.SetOwnerRequest) (*pb.SetAttrResponse, error) {
	_, err := s.mutate(ctx, r.Header, &pb.Command{Op: &pb.Command_SetOwner{SetOwner: r}})
	return attrResponse(err)
}

// SetTimes implements MetaService.
func (s *Server) SetTimes(ctx context.Context, r *pb.SetTimesRequest) (*pb.SetAttrResponse, error) {
	_, err := s.mutate(ctx, r.Header, &pb.Command{Op: &pb.Command_SetTimes{SetTimes: r}})
	return attrResponse(err)
}

func attrResponse(err error) (*pb.SetAttrResponse, error) {
	if err != nil {
		return nil, err
	}
	return &pb.SetAttrResponse{}, nil
}

// RecoverLease implements MetaService.
func (s *Server) RecoverLease(ctx context.Context, r *pb.RecoverLeaseRequest) (*pb.RecoverLeaseResponse, error) {
	v, err := s.mutate(ctx, r.Header, &pb.Command{Op: &pb.Command_RecoverLease{RecoverLease: r}})
	if err != nil {
		return nil, err
	}
	return &pb.RecoverLeaseResponse{Closed: v.(bool)}, nil
}

// RenewLease implements MetaService.
func (s *Server) RenewLease(_ context.Context, r *pb.RenewLeaseRequest) (*pb.RenewLeaseResponse, error) {
	if err := checkHeader(r.Header); err != nil {
		return nil, err
	}
	if !s.isLeader() {
		return nil, fserr.ToStatus(s.notLeader())
	}
	s.leases.renew(r.Header.GetClientName())
	return &pb.RenewLeaseResponse{}, nil
}

// CreateNamespace implements MetaService.
func (s *Server) CreateNamespace(ctx context.Context, r *pb.CreateNamespaceRequest) (*pb.CreateNamespaceResponse, error) {
	if _, err := s.mutate(ctx, r.Header, &pb.Command{Op: &pb.Command_CreateNamespace{CreateNamespace: r}}); err != nil {
		return nil, err
	}
	return &pb.CreateNamespaceResponse{}, nil
}

// DeleteNamespace implements MetaService.
func (s *Server) DeleteNamespace(ctx context.Context, r *pb.DeleteNamespaceRequest) (*pb.DeleteNamespaceResponse, error) {
	if _, err := s.mutate(ctx, r.Header, &pb.Command{Op: &pb.Command_DeleteNamespace{DeleteNamespace: r}}); err != nil {
		return nil, err
	}
	return &pb.DeleteNamespaceResponse{}, nil
}

// storeURI returns the bucket URI of the caller's namespace ("" if it
// vanished meanwhile).
func (s *Server) storeURI(h *pb.Header) string {
	var uri string
	_ = s.store.View(func(r kv.Reader) error {
		if rec, err := namespace.Lookup(r, h.GetNamespace()); err == nil {
			uri = rec.StoreURI
		}
		return nil
	})
	return uri
}
