package kvschema

import (
	"encoding/binary"
	"fmt"
)

// Prefixes of the records that belong to the Raft group rather than to a
// namespace.
const (
	prefixRequest    = 0x09
	prefixRequestAge = 0x0A
	prefixMember     = 0x0B
)

// MaxRequestID bounds the length of a client's request id.
const MaxRequestID = 64

// RequestKey is the key of the answer kept for request id.
func RequestKey(id []byte) []byte {
	return append([]byte{prefixRequest}, id...)
}

// RequestAgeKey indexes request id by the time it was applied, so that old
// answers can be dropped in order.
func RequestAgeKey(at int64, id []byte) []byte {
	k := binary.BigEndian.AppendUint64([]byte{prefixRequestAge}, uint64(at))
	return append(k, id...)
}

// RequestAgeRange is the range [start, end) of the age index before time
// before.
func RequestAgeRange(before int64) (start, end []byte) {
	return []byte{prefixRequestAge}, binary.BigEndian.AppendUint64([]byte{prefixRequestAge}, uint64(before))
}

// DecodeRequestAgeKey returns the request id of an age index key.
func DecodeRequestAgeKey(key []byte) ([]byte, error) {
	if len(key) < 9 || key[0] != prefixRequestAge {
		return nil, ErrCorrupt
	}
	return key[9:], nil
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

// IsRequestKey tells the keys of kept answers and their age index, which
// are written by every mutation and read only by its retries.
func IsRequestKey(key []byte) bool {
	return len(key) > 0 && (key[0] == prefixRequest || key[0] == prefixRequestAge)
}

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
