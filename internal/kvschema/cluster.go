package kvschema

import (
	"encoding/binary"
	"fmt"
)

// Prefixes of the records that belong to the Raft group rather than to a
// namespace. (0x0A, an index of the kept answers by time, is retired: the
// minute in the answers' keys took its place.)
const (
	prefixRequest = 0x09
	prefixMember  = 0x0B
)

// MaxRequestID bounds the length of a client's request id.
const MaxRequestID = 64

// RequestMinute is the span of the time buckets of kept answers, in
// milliseconds.
const RequestMinute = 60_000

// RequestKey is the key of the answer kept for request id, applied at time
// at (ms since the epoch): under the minute of at, so that old answers go in
// order, with no index of their own. A retry, whose first attempt's time is
// unknown, looks in each minute an answer may still be kept in.
func RequestKey(at int64, id []byte) []byte {
	k := binary.BigEndian.AppendUint64([]byte{prefixRequest}, uint64(at/RequestMinute))
	return append(k, id...)
}

// RequestRange is the range [start, end) of the answers kept for the
// minutes before the one of time before.
func RequestRange(before int64) (start, end []byte) {
	return []byte{prefixRequest}, binary.BigEndian.AppendUint64([]byte{prefixRequest}, uint64(before/RequestMinute))
}

// Answer is what a mutation returned, kept for retries of its request id.
// Kind tells which of the fields holds it.
type Answer struct {
	At    int64 // when it was applied, ms since the epoch
	Kind  AnswerKind
	Bool  bool
	Text  string
	Inode *Inode
}

// AnswerKind tells the type of a kept answer.
type AnswerKind uint8

// The kinds of answers.
const (
	AnswerNone AnswerKind = iota
	AnswerBool
	AnswerText
	AnswerInode
)

// EncodeAnswer encodes a kept answer.
func EncodeAnswer(a Answer) []byte {
	b := binary.AppendVarint([]byte{recordVersion}, a.At)
	b = append(b, byte(a.Kind))
	switch a.Kind {
	case AnswerBool:
		b = appendBool(b, a.Bool)
	case AnswerText:
		b = appendString(b, a.Text)
	case AnswerInode:
		b = append(b, EncodeInode(a.Inode)...)
	}
	return b
}

// DecodeAnswer decodes a kept answer.
func DecodeAnswer(b []byte) (Answer, error) {
	d := decoder{b: b}
	if d.byte() != recordVersion {
		return Answer{}, ErrCorrupt
	}
	a := Answer{At: d.varint(), Kind: AnswerKind(d.byte())}
	switch a.Kind {
	case AnswerNone:
	case AnswerBool:
		a.Bool = d.bool()
	case AnswerText:
		a.Text = d.string()
	case AnswerInode:
		if d.bad {
			return Answer{}, ErrCorrupt
		}
		n, err := DecodeInode(d.b)
		if err != nil {
			return Answer{}, err
		}
		a.Inode, d.b = n, nil
	default:
		return Answer{}, fmt.Errorf("%w: answer kind %d", ErrCorrupt, a.Kind)
	}
	return a, d.finish()
}

// IsRequestKey tells the keys of kept answers, which are written by every
// mutation and read only by its retries.
func IsRequestKey(key []byte) bool { return len(key) > 0 && key[0] == prefixRequest }

// MemberKey is the key of a Raft group member's record.
func MemberKey(id uint64) []byte { return idKey(prefixMember, id) }

// MemberRange is the range [start, end) of the member records.
func MemberRange() (start, end []byte) { return []byte{prefixMember}, []byte{prefixMember + 1} }

// Member is a member of the namespace service's Raft group.
type Member struct {
	ID      uint64
	Address string
	Learner bool
}

// EncodeMember encodes a member record (the id is in the key).
func EncodeMember(m Member) []byte {
	return appendBool(appendString([]byte{recordVersion}, m.Address), m.Learner)
}

// DecodeMember decodes the member record at key.
func DecodeMember(key, b []byte) (Member, error) {
	if len(key) != 9 || key[0] != prefixMember {
		return Member{}, ErrCorrupt
	}
	d := decoder{b: b}
	if d.byte() != recordVersion {
		return Member{}, ErrCorrupt
	}
	m := Member{ID: binary.BigEndian.Uint64(key[1:]), Address: d.string(), Learner: d.bool()}
	return m, d.finish()
}
