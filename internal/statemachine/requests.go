package statemachine

import (
	"fmt"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// RequestMemory is how long the answer of an applied request is kept for
// its retries; clients give up retrying well before. The leader forgets
// older answers with ForgetRequests commands.
const RequestMemory = 10 * time.Minute

// applyOnce applies cmd unless its request id was applied before, in which
// case it returns the answer kept from then (the lookup is skipped for a
// request the client marks as its first attempt). A command that failed
// changed nothing and kept nothing, so its retry simply runs again.
func (m *Machine) applyOnce(tx kv.Txn, op *Op, cmd *pb.Command) (Result, error) {
	h := op.header(cmd)
	rid := h.GetRequestId()
	if len(rid) > 0 && !h.GetFirstAttempt() {
		a, ok, err := findAnswer(tx, cmd.GetNow(), rid)
		if err != nil || ok {
			return op.restore(a), err
		}
	}
	r, err := op.apply(m.envOf(cmd), tx, cmd)
	if err != nil || len(rid) == 0 {
		return r, err
	}
	a := op.keep(r)
	a.At = cmd.GetNow()
	tx.Set(kvschema.RequestKey(cmd.GetNow(), rid), kvschema.EncodeAnswer(a))
	return r, nil
}

// findAnswer looks for the answer kept for request rid in every minute it
// may be kept under at time now: the last RequestMemory, and as much again
// on either side for leaders whose clocks disagree.
func findAnswer(r kv.Reader, now int64, rid []byte) (kvschema.Answer, bool, error) {
	memory := RequestMemory.Milliseconds()
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

// kept says what of a mutation's result of type Res is kept for the
// retries of its request (kvschema.Answer holds a flag, a text or an inode,
// or nothing), and how a retry's result is made of it.
type kept[Res any] struct {
	keep    func(Res) kvschema.Answer
	restore func(kvschema.Answer) Res
}

// The ways results are kept. NB: a false flag, an empty text and no inode
// are kept as nothing, as before results had types: every member, whatever
// its version, writes the same bytes for the same answer.
var (
	keptFlag = kept[bool]{
		keep: func(b bool) kvschema.Answer {
			if !b {
				return kvschema.Answer{}
			}
			return kvschema.Answer{Kind: kvschema.AnswerBool, Bool: true}
		},
		restore: func(a kvschema.Answer) bool { return a.Bool }}
	keptText = kept[string]{
		keep: func(s string) kvschema.Answer {
			if s == "" {
				return kvschema.Answer{}
			}
			return kvschema.Answer{Kind: kvschema.AnswerText, Text: s}
		},
		restore: func(a kvschema.Answer) string { return a.Text }}
	keptInode = kept[*kvschema.Inode]{
		keep: func(n *kvschema.Inode) kvschema.Answer {
			if n == nil {
				return kvschema.Answer{}
			}
			return kvschema.Answer{Kind: kvschema.AnswerInode, Inode: n}
		},
		restore: func(a kvschema.Answer) *kvschema.Inode { return a.Inode }}
)

// keptNothing keeps nothing of a result: a retry answers with the zero Res.
func keptNothing[Res any]() kept[Res] {
	return kept[Res]{keep: func(Res) kvschema.Answer { return kvschema.Answer{} }, restore: func(kvschema.Answer) Res {
		var zero Res
		return zero
	}}
}

// forgetRequests drops up to limit kept answers of the minutes before the
// one of time before.
func forgetRequests(tx kv.Txn, before int64, limit int) (int, error) {
	start, end := kvschema.RequestRange(before)
	var keys [][]byte
	err := tx.Scan(start, end, func(k, _ []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return len(keys) < limit
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		tx.Delete(k)
	}
	return len(keys), nil
}

// RequestsBefore reports whether answers kept before time before remain.
func RequestsBefore(r kv.Reader, before int64) (bool, error) {
	var pending bool
	start, end := kvschema.RequestRange(before)
	err := r.Scan(start, end, func(_, _ []byte) bool { pending = true; return false })
	return pending, err
}
