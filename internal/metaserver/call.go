package metaserver

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	sm "github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/trace"
)

// How the service carries out a call of an operation of the state
// machine's table: its caller set from the call's token, its steps
// (steps.go) around a read of the applied state or a proposal of its
// command. Errors are fserr conditions, translated to statuses by the
// server's interceptor (internal/rpcerr).

// mutate carries out mutation row for req and returns its typed response.
func mutate[Req sm.Request, Res any, Resp proto.Message](ctx context.Context, m *Member, row sm.MutationRow[Req, Res, Resp], req Req) (Resp, error) {
	return typed[Resp](m.do(ctx, row.Op, req))
}

// query carries out read row for req and returns its typed response.
func query[Req sm.Request, Resp proto.Message](ctx context.Context, m *Member, row sm.ReadRow[Req, Resp], req Req) (Resp, error) {
	return typed[Resp](m.do(ctx, row.Op, req))
}

func typed[Resp proto.Message](resp proto.Message, err error) (Resp, error) {
	if err != nil {
		var none Resp
		return none, err
	}
	return resp.(Resp), nil
}

// do carries out op for req: a read from the applied state, or a mutation
// proposed on behalf of the caller and answered once applied. Only the
// leader does either; the others answer NOT_LEADER with its address.
func (m *Member) do(ctx context.Context, op *sm.Op, req sm.Request) (resp proto.Message, err error) {
	defer m.observe(op, time.Now(), &err)
	return m.steps(ctx, op, req)
}

// observe tells the observer of a call of op that started at start and
// failed with *err.
func (m *Member) observe(op *sm.Op, start time.Time, err *error) {
	m.cfg.Observe.Op(op.Name, time.Since(start), *err)
}

// steps carries out op for req: do, unobserved.
func (m *Member) steps(ctx context.Context, op *sm.Op, req sm.Request) (proto.Message, error) {
	st := table[op]
	if err := m.admit(ctx, st, req); err != nil {
		return nil, err
	}
	req, ctx, release, err := m.prepare(ctx, op, st, req)
	if err != nil {
		return nil, err
	}
	if op.Kind == sm.Read {
		defer release()
		resp, err := m.read(ctx, op, req)
		return m.answer(ctx, st, req, resp, err)
	}
	p := newProposal(op.Command(req))
	if op.Ingests {
		m.core.submitAlone(p)
	} else {
		m.core.submit(p)
	}
	defer releaseWhenSettled(p, m.core.Done(), release)
	resp, err := m.responded(ctx, op, p)
	return m.answer(ctx, st, req, resp, err)
}

// admit sets the caller of req from the call's token and checks req
// before anything is read or proposed.
func (m *Member) admit(ctx context.Context, st steps, req sm.Request) error {
	if err := m.tokens.CheckCaller(ctx, req.GetHeader()); err != nil {
		return err
	}
	if err := trace.Check(req.GetHeader().GetTraceId()); err != nil {
		return err
	}
	return st.admit(ctx, m, req)
}

// read answers a read against the applied state, after a read barrier
// (replica.View).
func (m *Member) read(ctx context.Context, op *sm.Op, req proto.Message) (resp proto.Message, err error) {
	err = m.core.View(ctx, func(r kv.Reader) error {
		resp, err = m.core.machine.Read(op, r, req)
		return err
	})
	return resp, err
}

// responded waits for proposal p of mutation op and returns the response
// its result makes, or why it failed.
func (m *Member) responded(ctx context.Context, op *sm.Op, p *proposal) (proto.Message, error) {
	res, err := m.core.wait(ctx, p)
	if err != nil {
		return nil, err
	}
	return op.Respond(res), nil
}

// applyMutation proposes mutation op for req, without its steps, and
// returns its response.
func (m *Member) applyMutation(ctx context.Context, op *sm.Op, req sm.Request) (proto.Message, error) {
	p := newProposal(op.Command(req))
	m.core.submit(p)
	return m.responded(ctx, op, p)
}

// answer makes the answer of a call from what the read or the apply gave:
// finished, then granted its block token.
func (m *Member) answer(ctx context.Context, st steps, req sm.Request, resp proto.Message, err error) (proto.Message, error) {
	resp, err = st.finish(ctx, m, req, resp, err)
	if err != nil {
		return nil, err
	}
	return resp, st.grant(ctx, m, req, resp)
}
