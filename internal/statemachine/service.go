package statemachine

import (
	"errors"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// What the service reads of the state besides the operations' rows: the
// namespaces' records, the queues its leader works through, leases and
// tails. The service reaches the namespace only through this package, so
// that one package stands between it and the state's records.

// Config holds the namespace settings that affect the result of
// operations (namespace.Config).
type Config = namespace.Config

// Caller is who makes an operation: a user and its groups.
type Caller = namespace.Caller

// PathError is an operation's failure on a path: what the state machine's
// answers are.
type PathError = namespace.PathError

// GarbageItem is an entry of the block garbage queue.
type GarbageItem = namespace.GarbageItem

// DefaultNamespace is the namespace of bare paths.
const DefaultNamespace = namespace.DefaultNamespace

// The defaults of files whose creator leaves them unset.
const (
	DefaultBlockSize   = namespace.DefaultBlockSize
	DefaultReplication = namespace.DefaultReplication
)

// DefaultNamespaceTrash is how long, in milliseconds, a deleted namespace
// stays restorable unless the service is told otherwise.
const DefaultNamespaceTrash = namespace.DefaultNamespaceTrash

// DefaultConfig returns the default settings, with superuser.
func DefaultConfig(superuser string) Config { return namespace.DefaultConfig(superuser) }

// CallerOf returns the caller a request's header names.
func CallerOf(h *pb.Header) Caller { return Caller{User: h.GetUser(), Groups: h.GetGroups()} }

// IsSuperuser reports whether c bypasses permission checks, with this
// member's settings.
func (m *Machine) IsSuperuser(c Caller) bool { return m.fs.IsSuperuser(c) }

// Config returns this member's settings.
func (m *Machine) Config() Config { return m.fs.Config() }

// Stamp formats a time of the state (milliseconds since the epoch) for
// messages.
func Stamp(ms int64) string { return namespace.Stamp(ms) }

// ObjectKey is the key of the object that holds the file at path in a
// cache-mode namespace's bucket.
func ObjectKey(path string) string { return namespace.ObjectKey(path) }

// ValidNamespaceName reports whether name may name a namespace.
func ValidNamespaceName(name string) bool { return namespace.ValidNamespaceName(name) }

// NamespaceRecord returns the record of live namespace name ("" is the
// default); one in the trash is fserr.ErrNoNamespace.
func NamespaceRecord(r kv.Reader, name string) (*kvschema.Namespace, error) {
	return namespace.Lookup(r, name)
}

// AnyNamespaceRecord returns the record of namespace name, in the trash or
// not.
func AnyNamespaceRecord(r kv.Reader, name string) (*kvschema.Namespace, error) {
	return namespace.Record(r, name)
}

// Namespaces returns every namespace's record, those in the trash too.
func Namespaces(r kv.Reader) ([]*kvschema.Namespace, error) { return namespace.Namespaces(r) }

// ExpiredNamespaces returns the namespaces whose time in the trash is
// over at now.
func ExpiredNamespaces(r kv.Reader, now int64) ([]*kvschema.Namespace, error) {
	return namespace.ExpiredNamespaces(r, now)
}

// NamespaceOf names the namespace holding inode ino (fserr.ErrNotFound if
// it is in none: deleted, or in a subtree awaiting purge).
func NamespaceOf(r kv.Reader, ino uint64) (string, error) { return namespace.NamespaceOf(r, ino) }

// GarbageBatch returns up to limit entries of the block garbage queue.
func GarbageBatch(r kv.Reader, limit int) ([]GarbageItem, error) {
	return namespace.GarbageBatch(r, limit)
}

// CommittedBlocks returns the ids of the blocks file ino has committed, and
// whether the file exists.
func CommittedBlocks(r kv.Reader, ino uint64) (map[uint64]bool, bool, error) {
	return namespace.CommittedBlocks(r, ino)
}

// PurgePending reports whether detached subtrees wait to be purged.
func PurgePending(r kv.Reader) (bool, error) { return namespace.PurgePending(r) }

// Leases calls fn with each lease's holder and file until fn returns false.
func Leases(r kv.Reader, fn func(holder string, ino uint64) bool) error {
	return namespace.Leases(r, fn)
}

// Tail returns the flushed tail of file ino: where it starts and its bytes
// (none for a file without one).
func Tail(r kv.Reader, ino uint64) (start uint64, data []byte, err error) {
	_, start, data, err = namespace.OpenTail(r, ino)
	return start, data, err
}

// Writer returns the file at path as caller c sees it, and who holds its
// lease ("" for a closed file or a directory).
func (m *Machine) Writer(r kv.Reader, c Caller, ns, path string) (ino uint64, holder string, err error) {
	n, err := m.fs.Stat(r, c, ns, path)
	if err != nil || n.IsDir() {
		return 0, "", err
	}
	return n.ID, n.Holder, nil
}

// Names lists the names in directory dir of namespace ns as c sees them;
// none if dir is missing or not a directory.
func (m *Machine) Names(r kv.Reader, c Caller, ns, dir string) ([]string, error) {
	var out []string
	for after := ""; ; {
		l, err := m.fs.List(r, c, ns, dir, after, MaxPage)
		if errors.Is(err, namespace.ErrNotFound) {
			return nil, nil
		}
		if err != nil || !l.Self.IsDir() {
			return out, err
		}
		for _, n := range l.Entries {
			out = append(out, n.Name)
		}
		if !l.More {
			return out, nil
		}
		after = l.Entries[len(l.Entries)-1].Name
	}
}

// Inline returns the file at path as c sees it when its content is inline
// (a small file's, in its inode): its inode, modification time and bytes;
// ino 0 for any other entry or none.
func (m *Machine) Inline(r kv.Reader, c Caller, ns, path string) (ino uint64, mtime int64, data []byte, err error) {
	n, err := m.fs.Stat(r, c, ns, path)
	if err != nil || n.IsDir() || !n.Inline || n.Length == 0 {
		return 0, 0, nil, nil
	}
	v, ok, err := r.Get(kvschema.InlineKey(n.ID))
	if err != nil || !ok {
		return 0, 0, nil, err
	}
	return n.ID, n.Mtime, append([]byte(nil), v...), nil
}
