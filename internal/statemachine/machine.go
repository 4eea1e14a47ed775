package statemachine

import (
	"errors"
	"fmt"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Machine applies commands with the namespace settings of the member that
// runs it; a command the leader stamped with other settings is applied with
// those, so that every replica applies it alike. A Machine holds no state
// of its own: all of it is in the store. It is safe for concurrent use.
type Machine struct {
	fs       *namespace.FS
	settings *pb.NamespaceSettings
}

// New returns a machine applying commands with the settings cfg.
func New(cfg namespace.Config) *Machine {
	return &Machine{fs: namespace.New(cfg), settings: settingsOf(cfg)}
}

// FS returns the namespace operations with this member's settings.
func (m *Machine) FS() *namespace.FS { return m.fs }

// Settings returns the settings the leader stamps on the commands it
// proposes. The caller must not modify them.
func (m *Machine) Settings() *pb.NamespaceSettings { return m.settings }

// Result is what applying one command produced: the value of its row's
// result type (Mkdirs a bool, Create the file's inode, Rename the path the
// source ended up at, ...), which the row's Result method returns typed, or
// the operation's answer when it failed.
type Result struct {
	// Err is the operation's answer when it failed: an fserr condition
	// (usually a *namespace.PathError). The command changed nothing.
	Err   error
	value any
}

// Value returns r's value untyped, for printing; the row's Result method
// returns it typed.
func (r Result) Value() any { return r.value }

// valueOf returns r's value as a T: the zero T for a failed command.
func valueOf[T any](r Result) T {
	v, _ := r.value.(T)
	return v
}

// Applied is what applying a run of log entries produced, for the service
// to act on once the transaction is committed.
type Applied struct {
	// Answers are the results for the proposals of the entries, in order.
	Answers []Answer
	// MembersChanged tells that a membership change was applied; Removed
	// are the members it removed.
	MembersChanged bool
	Removed        []uint64
	// Purge tells that a command may have left detached subtrees to purge;
	// Collect, that one may have queued block garbage; Namespaces, that
	// one may have created or deleted namespaces; Tokens, that one may
	// have changed the token state.
	Purge, Collect, Namespaces, Tokens, Imports bool
	// Ingest is set when a command added tables (a committed import):
	// ApplyEntries stopped after its entry, and the caller commits the
	// transaction by ingesting them with it (pebblekv.Store.Ingest), then
	// applies the entries after it, from Consumed on.
	Ingest   *Ingest
	Consumed int
}

// Answer is the results of one proposal: one per command of its entry (a
// group's in order), none for a membership change.
type Answer struct {
	ID      uint64
	Results []Result
}

// ApplyEntries applies a run of committed entries to tx, as one atomic
// batch, and records the last one's index and term as applied, in the same
// transaction; it stops early after an entry that ingests (Applied.Ingest,
// Consumed). A command that fails leaves nothing in tx: its Result says
// why. The error is a failure of the state machine itself (a corrupt entry
// or state, a store error), after which tx must be discarded.
func (m *Machine) ApplyEntries(tx *kv.Overlay, entries []*raftpb.Entry) (Applied, error) {
	var out Applied
	for _, e := range entries {
		switch {
		case e.GetType() == raftpb.EntryType_EntryConfChange:
			id, removed, err := applyConfChange(tx, e)
			if err != nil {
				return Applied{}, err
			}
			out.MembersChanged, out.Removed = true, append(out.Removed, removed...)
			out.Answers = append(out.Answers, Answer{ID: id})
		case e.GetType() != raftpb.EntryType_EntryNormal || len(e.GetData()) == 0:
		default:
			cmd := &pb.Command{}
			if err := proto.Unmarshal(e.GetData(), cmd); err != nil {
				return Applied{}, fmt.Errorf("entry %d: %w", e.GetIndex(), err)
			}
			rs, err := m.apply(tx, cmd, &out)
			if err != nil {
				return Applied{}, fmt.Errorf("entry %d: %w", e.GetIndex(), err)
			}
			out.Answers = append(out.Answers, Answer{ID: cmd.GetId(), Results: rs})
		}
		out.Consumed++
		if out.Ingest != nil {
			break
		}
	}
	if n := out.Consumed; n > 0 {
		SetApplied(tx, entries[n-1].GetIndex(), entries[n-1].GetTerm())
	}
	return out, nil
}

// Apply applies cmd, one command or a group, to tx and returns one Result
// per command. It is ApplyEntries for one command, without the index.
func (m *Machine) Apply(tx *kv.Overlay, cmd *pb.Command) ([]Result, error) {
	return m.apply(tx, cmd, &Applied{})
}

// apply applies the command of one entry: a group's commands each as if it
// came alone, in order, with the group's time and settings.
func (m *Machine) apply(tx *kv.Overlay, cmd *pb.Command, out *Applied) ([]Result, error) {
	g := cmd.GetGroup()
	if g == nil {
		r, err := m.applyOne(tx, cmd, out)
		return []Result{r}, err
	}
	rs := make([]Result, len(g.GetCommands()))
	for i, c := range g.GetCommands() {
		c.Now, c.Settings = cmd.GetNow(), cmd.GetSettings()
		r, err := m.applyOne(tx, c, out)
		if err != nil {
			return nil, err
		}
		rs[i] = r
	}
	return rs, nil
}

// applyOne applies one command, rolling its writes back if it fails, so
// that a failed one leaves nothing behind.
func (m *Machine) applyOne(tx *kv.Overlay, cmd *pb.Command, out *Applied) (Result, error) {
	op := opOf(cmd)
	if op == nil {
		return Result{}, fmt.Errorf("unknown command %T", cmd.GetOp())
	}
	tx.Mark()
	r, err := m.applyOnce(tx, op, cmd)
	if err != nil {
		if !isOutcome(err) {
			return Result{}, err
		}
		tx.Rollback()
		return Result{Err: err}, nil
	}
	out.Purge = out.Purge || op.Detaches
	out.Collect = out.Collect || op.FreesBlocks
	out.Namespaces = out.Namespaces || op.Namespaces
	out.Tokens = out.Tokens || op.Tokens
	out.Imports = out.Imports || op.Imports
	if in, ok := r.value.(*Ingest); ok && op.Ingests && in != nil {
		out.Ingest = in
	}
	return r, nil
}

// env is what a command is applied with besides the state.
type env struct {
	fs  *namespace.FS
	now int64
}

// envOf returns the environment of cmd: its time, and the namespace
// operations with the settings it was proposed with (entries older than
// the settings field use this member's).
func (m *Machine) envOf(cmd *pb.Command) env {
	e := env{fs: m.fs, now: cmd.GetNow()}
	if st := cmd.GetSettings(); st != nil {
		if cfg := settingsConfig(st); cfg != m.fs.Config() {
			e.fs = namespace.New(cfg)
		}
	}
	return e
}

// isOutcome tells an operation's answer (an error the caller gets) from a
// failure of the state machine itself (corrupt state, a store error).
func isOutcome(err error) bool {
	var pe *namespace.PathError
	return errors.As(err, &pe) && !errors.Is(err, kvschema.ErrCorrupt)
}

func settingsOf(c namespace.Config) *pb.NamespaceSettings {
	return &pb.NamespaceSettings{Superuser: c.Superuser, Supergroup: c.Supergroup,
		InlineLimit: uint32(c.InlineLimit), BlockSize: c.BlockSize, NamespaceTrashMs: c.NamespaceTrash}
}

func settingsConfig(st *pb.NamespaceSettings) namespace.Config {
	return namespace.Config{Superuser: st.Superuser, Supergroup: st.Supergroup,
		InlineLimit: int(st.InlineLimit), BlockSize: st.BlockSize, NamespaceTrash: st.NamespaceTrashMs}
}
