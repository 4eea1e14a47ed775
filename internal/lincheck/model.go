// Package lincheck is what Strata's failure tests check a history of
// concurrent clients' operations against: a model of a few groups of
// directories and files (porcupine's Model), the operations themselves run
// through the Go client, and the history they make, recorded in this
// process or streamed from client processes of their own (on hosts of
// their own: internal/testhosts) as lines of JSON.
//
// Each group is a partition of the model. A directory's permission bits
// are its value, so mkdir, chmod, rename, delete and stat are each one Raft
// command or one read, with answers the model predicts exactly. A file's
// value is the number written in its content: a client writes the content
// to a file of its own, then renames it over the group's file (one Raft
// command), and a read opens the file and checks its content's checksum
// before it reports the number. So the model catches an acknowledged write
// lost, a write that was refused yet visible, and a file read back with
// other bytes than were written.
//
// What it is not: a test. It is test support (metaserver's
// TestLinearizableAcrossFailures, testhosts' TestPartitions).
package lincheck

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// Slots is the number of directories, and of files, per group.
const Slots = 3

// Kind is an operation's kind.
type Kind uint8

// The operations.
const (
	Mkdir Kind = iota
	Chmod
	Rename
	Delete
	Stat
	Publish // rename a written file over the group's file A
	Read    // read the group's file A back, its checksum checked
	kinds
)

var kindNames = [...]string{"mkdir", "chmod", "rename", "delete", "stat", "publish", "read"}

func (k Kind) String() string {
	if k < kinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Input is an operation asked.
type Input struct {
	Group int    `json:"g"`
	Kind  Kind   `json:"k"`
	A     int    `json:"a"`           // a slot
	B     int    `json:"b,omitempty"` // rename's destination slot
	Perm  uint32 `json:"p,omitempty"` // mkdir, chmod
	Value int64  `json:"v,omitempty"` // publish: the number the file's content holds (unique)
}

// Output is an operation's answer.
type Output struct {
	// Unknown: the call failed without an answer (the service unreachable,
	// no leader, a timeout): it may or may not have happened.
	Unknown bool `json:"u,omitempty"`
	OK      bool `json:"ok,omitempty"` // mkdir created; chmod, rename, delete, publish applied
	// Perm is a stat's permission, -1 for a missing directory; Value a
	// read's number, -1 for a missing file.
	Perm  int   `json:"p,omitempty"`
	Value int64 `json:"v,omitempty"`
}

// state is one group's directories (permission, -1 when absent) and files
// (value, -1 when absent).
type state struct {
	dirs  [Slots]int
	files [Slots]int64
}

func step(s, input, output any) (bool, any) {
	st, in, out := s.(state), input.(Input), output.(Output)
	next, ok := st, false
	switch in.Kind {
	case Mkdir:
		if ok = st.dirs[in.A] < 0; ok {
			next.dirs[in.A] = int(in.Perm)
		}
	case Chmod:
		if ok = st.dirs[in.A] >= 0; ok {
			next.dirs[in.A] = int(in.Perm)
		}
	case Rename:
		if ok = st.dirs[in.A] >= 0 && st.dirs[in.B] < 0; ok {
			next.dirs[in.B], next.dirs[in.A] = st.dirs[in.A], -1
		}
	case Delete:
		if ok = st.dirs[in.A] >= 0; ok {
			next.dirs[in.A] = -1
		}
	case Publish:
		ok, next.files[in.A] = true, in.Value
	case Stat:
		return out.Unknown || out.Perm == st.dirs[in.A], st
	case Read:
		return out.Unknown || out.Value == st.files[in.A], st
	}
	if out.Unknown {
		return true, next // linearized where it would have taken effect; unobserved if never
	}
	return out.OK == ok, next
}

// Model is the model of one group per partition.
var Model = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byGroup := map[int][]porcupine.Operation{}
		var groups []int
		for _, op := range h {
			g := op.Input.(Input).Group
			if _, ok := byGroup[g]; !ok {
				groups = append(groups, g)
			}
			byGroup[g] = append(byGroup[g], op)
		}
		out := make([][]porcupine.Operation, 0, len(groups))
		for _, g := range groups {
			out = append(out, byGroup[g])
		}
		return out
	},
	Init: func() any {
		var s state
		for i := range Slots {
			s.dirs[i], s.files[i] = -1, -1
		}
		return s
	},
	Step: step,
	DescribeOperation: func(input, output any) string {
		in, out := input.(Input), output.(Output)
		return fmt.Sprintf("g%d %v(%d,%d,%o,%d) -> %+v", in.Group, in.Kind, in.A, in.B, in.Perm, in.Value, out)
	},
}
