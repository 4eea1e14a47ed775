package statemachine

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// DefaultPage is the listing page size when the client leaves it unset;
// MaxPage bounds what a client may ask for.
const (
	DefaultPage = 1000
	MaxPage     = 10000
)

func readFileStatus(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.GetFileStatusRequest) (*pb.GetFileStatusResponse, error) {
	n, err := m.fs.Stat(r, c, ns, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &pb.GetFileStatusResponse{Status: FileStatus(n)}, nil
}

func readOpen(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.OpenRequest) (*pb.OpenResponse, error) {
	n, content, err := m.fs.Open(r, c, ns, req.GetPath())
	if err != nil {
		return nil, err
	}
	rec, err := namespace.Lookup(r, ns)
	if err != nil {
		return nil, err
	}
	resp := &pb.OpenResponse{Status: FileStatus(n), InlineData: content.Inline, Inline: n.Inline, StoreUri: rec.StoreURI,
		ObjectKey: content.ObjectKey, ObjectVersion: content.Version, StoragePolicy: uint32(content.Policy)}
	if content.HasTail {
		resp.TailOffset = content.TailOffset
	}
	for _, b := range content.Blocks {
		resp.Blocks = append(resp.Blocks, &pb.Block{BlockId: b.ID, Offset: b.Offset, Length: b.Length})
	}
	return resp, nil
}

// readList answers one page, so that a directory of any size streams
// through pages without being held in memory. Its entries are encoded
// straight from their inode records, each once (appendFileStatus), and ride
// in the response as its unknown fields: what proto.Marshal writes of them
// is field 1, entries, as if they had been set, with no FileStatus made
// and no reflection over it. NB: so a response read in the same process,
// not through the wire, holds no Entries (WireForm gives what a client
// receives).
func readList(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.ListRequest) (*pb.ListResponse, error) {
	limit := int(req.GetLimit())
	if limit <= 0 {
		limit = DefaultPage
	}
	limit = min(limit, MaxPage)
	var (
		v         kvschema.InodeView
		one, wire []byte
	)
	self, more, err := m.fs.ListRecords(r, c, ns, req.GetPath(), req.GetStartAfter(), limit, func(rec []byte) error {
		if err := kvschema.DecodeInodeView(rec, &v); err != nil {
			return err
		}
		if wire == nil { // sized by a guess from the first entry; append grows it
			wire = make([]byte, 0, (16+len(rec))*min(limit, firstWireEntries))
		}
		one = appendFileStatus(one[:0], &v)
		wire = protowire.AppendTag(wire, listEntriesField, protowire.BytesType)
		wire = protowire.AppendBytes(wire, one)
		return nil
	})
	if err != nil {
		return nil, err
	}
	resp := &pb.ListResponse{HasMore: more, Status: FileStatus(self)}
	resp.ProtoReflect().SetUnknown(wire)
	return resp, nil
}

// firstWireEntries is how many entries a listing's wire buffer is first
// made for: a directory of a walked tree holds about a hundred, and a buffer
// made for a whole page of them (a thousand) was a large allocation, zeroed,
// for each such directory listed.
const firstWireEntries = 128

// listEntriesField is ListResponse.entries' field number.
const listEntriesField = 1

// WireForm returns what a client receives of a response that may carry
// fields pre-encoded (readList's entries): the message decoded from its
// wire form. For tests and in-process readers.
func WireForm[T proto.Message](m T) (T, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return m, err
	}
	out := m.ProtoReflect().New().Interface().(T)
	return out, proto.Unmarshal(b, out)
}

// appendFileStatus appends the wire form of FileStatus(n) (proto.Marshal's
// bytes: fields in number order, zero values left out) without making one.
func appendFileStatus(b []byte, v *kvschema.InodeView) []byte {
	n := &v.Inode
	b = appendBytesField(b, 1, v.Name)
	b = appendVarintField(b, 2, n.ID)
	dir := n.IsDir()
	typ := pb.FileType_FILE_TYPE_FILE
	if dir {
		typ = pb.FileType_FILE_TYPE_DIRECTORY
	}
	b = appendVarintField(b, 3, uint64(typ))
	if !dir {
		b = appendVarintField(b, 4, n.Length)
	}
	b = appendVarintField(b, 5, uint64(n.Perm))
	b = appendBytesField(b, 6, v.Owner)
	b = appendBytesField(b, 7, v.Group)
	b = appendVarintField(b, 8, uint64(n.Mtime))
	b = appendVarintField(b, 9, uint64(n.Atime))
	if dir {
		b = appendVarintField(b, 13, n.Children)
	} else {
		b = appendVarintField(b, 10, uint64(n.Replication))
		b = appendVarintField(b, 11, n.BlockSize)
		if len(v.Holder) > 0 {
			b = appendVarintField(b, 12, 1)
		}
	}
	if len(n.ACL) > 0 {
		b = appendVarintField(b, 20, 1)
	}
	return b
}

func appendVarintField(b []byte, num protowire.Number, x uint64) []byte {
	if x == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), x)
}

func appendBytesField(b []byte, num protowire.Number, s []byte) []byte {
	if len(s) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), s)
}

// readTail answers a reader of a file being written: bytes of its flushed
// tail.
func readTail(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.ReadTailRequest) (*pb.ReadTailResponse, error) {
	data, err := m.fs.ReadTail(r, c, ns, req.GetPath(), req.GetInodeId(), req.GetOffset(), min(req.GetLength(), MaxTailRead))
	if err != nil {
		return nil, err
	}
	return &pb.ReadTailResponse{Data: data}, nil
}

// MaxTailRead bounds the bytes one ReadTail answers.
const MaxTailRead = 4 << 20

// readContentSummary answers from the directory aggregates, without a walk.
func readContentSummary(m *Machine, r kv.Reader, c namespace.Caller, ns string,
	req *pb.GetContentSummaryRequest) (*pb.GetContentSummaryResponse, error) {
	sum, err := m.fs.ContentSummary(r, c, ns, req.GetPath())
	if err != nil {
		return nil, err
	}
	n, err := m.fs.Stat(r, c, ns, req.GetPath())
	if err != nil {
		return nil, err
	}
	repl := uint64(1)
	if !n.IsDir() {
		repl = uint64(max(n.Replication, 1))
	}
	rec, err := namespace.Lookup(r, ns)
	if err != nil {
		return nil, err
	}
	resp := &pb.GetContentSummaryResponse{Length: sum.Length, FileCount: sum.Files,
		DirectoryCount: sum.Dirs, SpaceConsumed: sum.Length * repl, LoadedOnly: rec.IsCache()}
	if q := n.Quota; q != nil {
		resp.Quota = &pb.Quota{Names: q.Names, Space: q.Space}
	}
	return resp, nil
}

func readNamespaces(_ *Machine, r kv.Reader, _ namespace.Caller, _ string, _ *pb.ListNamespacesRequest) (*pb.ListNamespacesResponse, error) {
	list, err := namespace.Namespaces(r)
	if err != nil {
		return nil, err
	}
	resp := &pb.ListNamespacesResponse{}
	for _, ns := range list {
		resp.Namespaces = append(resp.Namespaces, namespaceInfo(ns))
	}
	return resp, nil
}

// namespaceInfo is the wire form of namespace record ns.
func namespaceInfo(ns *kvschema.Namespace) *pb.NamespaceInfo {
	return &pb.NamespaceInfo{Name: ns.Name, Mode: pb.NamespaceMode(ns.Mode), StoreUri: ns.StoreURI, Created: ns.Created,
		Deleted: ns.Deleted, PurgeAt: ns.PurgeAt, SyncInterval: ns.SyncInterval}
}

// FileStatus is the wire form of inode n.
func FileStatus(n *kvschema.Inode) *pb.FileStatus {
	if n == nil {
		return nil
	}
	st := &pb.FileStatus{Name: n.Name, InodeId: n.ID, Permission: uint32(n.Perm), Owner: n.Owner,
		Group: n.Group, ModificationTime: n.Mtime, AccessTime: n.Atime, HasAcl: len(n.ACL) > 0}
	if n.IsDir() {
		st.Type, st.Children = pb.FileType_FILE_TYPE_DIRECTORY, n.Children
		return st
	}
	st.Type, st.Length, st.Replication, st.BlockSize = pb.FileType_FILE_TYPE_FILE, n.Length, n.Replication, n.BlockSize
	st.UnderConstruction = n.Holder != ""
	return st
}

// maxCountedGarbage bounds the garbage entries a server status counts.
const maxCountedGarbage = 10000

// readServerStatus answers what the state holds: each namespace's usage,
// from its root's aggregates, and the work queued. The service adds the
// member's own (its version, its live workers).
func readServerStatus(_ *Machine, r kv.Reader, _ namespace.Caller, _ string, _ *pb.GetServerStatusRequest) (*pb.GetServerStatusResponse, error) {
	list, err := namespace.Namespaces(r)
	if err != nil {
		return nil, err
	}
	resp := &pb.GetServerStatusResponse{}
	for _, ns := range list {
		sum, err := namespace.Usage(r, ns)
		if err != nil {
			return nil, err
		}
		resp.Namespaces = append(resp.Namespaces, &pb.NamespaceUsage{Namespace: namespaceInfo(ns), Files: sum.Files,
			Directories: sum.Dirs, Length: sum.Length})
	}
	err = namespace.Leases(r, func(string, uint64) bool { resp.OpenFiles++; return true })
	if err != nil {
		return nil, err
	}
	garbage, err := namespace.GarbageBatch(r, maxCountedGarbage)
	if err != nil {
		return nil, err
	}
	resp.GarbageBlocks = uint64(len(garbage))
	resp.PurgePending, err = namespace.PurgePending(r)
	return resp, err
}
