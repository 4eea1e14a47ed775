package metaserver

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The MetaService handlers of the namespace's operations each call their
// row of statemachine's table; do carries any of them out. Errors are
// fserr conditions, translated to statuses by the server's interceptor
// (internal/rpcerr).

// request is a client's request: every one has a header.
type request interface {
	proto.Message
	GetHeader() *pb.Header
}

// call carries out op for req and returns its typed response.
func call[Resp proto.Message](ctx context.Context, s *Server, op *statemachine.Op, req request) (Resp, error) {
	var none Resp
	resp, err := s.do(ctx, op, req)
	if err != nil {
		return none, err
	}
	return resp.(Resp), nil
}

// do carries out op for req: a read from the applied state, or a mutation
// proposed on behalf of the caller and answered once applied. Only the
// leader does either; the others answer NOT_LEADER with its address.
func (s *Server) do(ctx context.Context, op *statemachine.Op, req request) (proto.Message, error) {
	if err := s.admit(ctx, op, req); err != nil {
		return nil, err
	}
	req, ctx, release, err := s.prepare(ctx, op, req)
	if err != nil {
		return nil, err
	}
	if op.Kind == statemachine.Read {
		defer release()
		return s.read(ctx, op, req)
	}
	p := newProposal(op.Command(req))
	s.submit(p)
	defer releaseWhenSettled(p, s.node.Done(), release)
	res, err := s.wait(ctx, p)
	return s.answer(ctx, op, req, res, err)
}

// admit checks req before anything is proposed or read, and sets its
// caller from the call's token.
func (s *Server) admit(ctx context.Context, op *statemachine.Op, req request) error {
	if err := s.checkCaller(ctx, req.GetHeader()); err != nil {
		return err
	}
	if err := checkNewNames(req); err != nil {
		return err
	}
	if r, ok := req.(*pb.CreateRequest); ok && op == statemachine.Create && r.GetHeader().GetClientName() == "" {
		return fserr.Errorf(fserr.ErrInvalidArgument, "create %s: request header has no client name", r.GetPath())
	}
	return nil
}

// checkCaller sets the caller of header h from the identity of the call in
// ctx (with authentication off, h says who calls), then checks h.
func (s *Server) checkCaller(ctx context.Context, h *pb.Header) error {
	id, err := s.identify(ctx)
	if err != nil {
		return err
	}
	stamp(h, id)
	return checkHeader(h)
}

func checkHeader(h *pb.Header) error {
	if h.GetUser() == "" {
		return fserr.Errorf(fserr.ErrInvalidArgument, "request header has no user")
	}
	if len(h.GetRequestId()) > kvschema.MaxRequestID {
		return fserr.Errorf(fserr.ErrInvalidArgument, "request id of %d bytes: at most %d", len(h.GetRequestId()), kvschema.MaxRequestID)
	}
	return nil
}

// read answers a read against the applied state, after a read barrier that
// makes it linearizable: only a leader that a quorum still follows answers,
// once it applied everything committed before. (A batch passes one barrier
// for all its reads.)
func (s *Server) read(ctx context.Context, op *statemachine.Op, req proto.Message) (resp proto.Message, err error) {
	err = s.view(ctx, func(r kv.Reader) error {
		resp, err = s.machine.Read(op, r, req)
		return err
	})
	if err == nil {
		err = s.grant(ctx, req.(request), resp)
	}
	return resp, err
}

// view runs fn against the applied state after a read barrier.
func (s *Server) view(ctx context.Context, fn func(r kv.Reader) error) error {
	if !passedBarrier(ctx) {
		if err := s.node.ReadBarrier(ctx); err != nil {
			return s.raftError(err)
		}
	}
	return s.store.View(fn)
}

// answer makes the response of mutation op from the result of applying
// its command, or the error.
func (s *Server) answer(ctx context.Context, op *statemachine.Op, req request, res statemachine.Result, err error) (proto.Message, error) {
	if r, ok := req.(*pb.CreateRequest); ok && op == statemachine.Create {
		return s.created(ctx, r, res, err)
	}
	if err != nil {
		return nil, err
	}
	resp := op.Respond(res)
	return resp, s.grant(ctx, req, resp)
}

// created answers a create. A file held by a writer that stopped renewing
// for longer than the soft limit is recovered and taken over. A complete
// create holds no lease: nothing is left to renew.
func (s *Server) created(ctx context.Context, r *pb.CreateRequest, res statemachine.Result, err error) (proto.Message, error) {
	if errors.Is(err, fserr.ErrLeaseConflict) && r.GetOverwrite() && s.takeOverExpired(ctx, r) {
		res, err = s.propose(ctx, statemachine.Create.Command(r))
	}
	if err != nil {
		return nil, err
	}
	resp := statemachine.Create.Respond(res).(*pb.CreateResponse)
	resp.InlineLimit = uint32(s.cfg.Namespace.InlineLimit)
	if !r.GetComplete() {
		s.leases.renew(r.GetHeader().GetClientName())
		if rec := s.namespaceRecord(r.GetHeader()); rec != nil {
			resp.StoreUri = rec.StoreURI
			if rec.IsCache() {
				resp.ObjectKey = namespace.ObjectKey(r.GetPath())
			}
		}
	}
	return resp, s.grant(ctx, r, resp)
}

// takeOverExpired closes the file at r.Path if its writer's lease is past
// the soft limit, and reports whether it did.
func (s *Server) takeOverExpired(ctx context.Context, r *pb.CreateRequest) bool {
	var n *kvschema.Inode
	h := r.GetHeader()
	err := s.view(ctx, func(rd kv.Reader) (err error) {
		n, err = s.machine.FS().Stat(rd, caller(h), h.GetNamespace(), r.GetPath())
		return err
	})
	if err != nil || n.Holder == "" || n.Holder == h.GetClientName() ||
		!s.leases.expired(n.Holder, s.cfg.LeaseSoftLimit) {
		return false
	}
	return s.expire(ctx, n.Holder, n.ID) == nil
}

func caller(h *pb.Header) namespace.Caller {
	return namespace.Caller{User: h.GetUser(), Groups: h.GetGroups()}
}

// namespaceRecord returns the record of the caller's namespace (nil if it
// vanished meanwhile).
func (s *Server) namespaceRecord(h *pb.Header) *kvschema.Namespace {
	var rec *kvschema.Namespace
	_ = s.store.View(func(r kv.Reader) (err error) {
		rec, err = namespace.Lookup(r, h.GetNamespace())
		return err
	})
	return rec
}

// RenewLease implements MetaService.
func (s *Server) RenewLease(ctx context.Context, r *pb.RenewLeaseRequest) (*pb.RenewLeaseResponse, error) {
	if err := s.checkCaller(ctx, r.Header); err != nil {
		return nil, err
	}
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	s.leases.renew(r.Header.GetClientName())
	return &pb.RenewLeaseResponse{}, nil
}
