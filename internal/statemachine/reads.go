package statemachine

import (
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
		ObjectKey: content.ObjectKey, ObjectVersion: content.Version}
	if content.HasTail {
		resp.TailOffset = content.TailOffset
	}
	for _, b := range content.Blocks {
		resp.Blocks = append(resp.Blocks, &pb.Block{BlockId: b.ID, Offset: b.Offset, Length: b.Length})
	}
	return resp, nil
}

// readList answers one page, so that a directory of any size streams
// through pages without being held in memory.
func readList(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.ListRequest) (*pb.ListResponse, error) {
	limit := int(req.GetLimit())
	if limit <= 0 {
		limit = DefaultPage
	}
	l, err := m.fs.List(r, c, ns, req.GetPath(), req.GetStartAfter(), min(limit, MaxPage))
	if err != nil {
		return nil, err
	}
	resp := &pb.ListResponse{HasMore: l.More, Status: FileStatus(l.Self), Entries: make([]*pb.FileStatus, len(l.Entries))}
	for i, n := range l.Entries {
		resp.Entries[i] = FileStatus(n)
	}
	return resp, nil
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
	return &pb.GetContentSummaryResponse{Length: sum.Length, FileCount: sum.Files,
		DirectoryCount: sum.Dirs, SpaceConsumed: sum.Length * repl, LoadedOnly: rec.IsCache()}, nil
}

func readNamespaces(_ *Machine, r kv.Reader, _ namespace.Caller, _ string, _ *pb.ListNamespacesRequest) (*pb.ListNamespacesResponse, error) {
	list, err := namespace.Namespaces(r)
	if err != nil {
		return nil, err
	}
	resp := &pb.ListNamespacesResponse{}
	for _, ns := range list {
		resp.Namespaces = append(resp.Namespaces, &pb.NamespaceInfo{Name: ns.Name,
			Mode: pb.NamespaceMode(ns.Mode), StoreUri: ns.StoreURI, Created: ns.Created,
			Deleted: ns.Deleted, PurgeAt: ns.PurgeAt, SyncInterval: ns.SyncInterval})
	}
	return resp, nil
}

// FileStatus is the wire form of inode n.
func FileStatus(n *kvschema.Inode) *pb.FileStatus {
	if n == nil {
		return nil
	}
	st := &pb.FileStatus{Name: n.Name, InodeId: n.ID, Permission: uint32(n.Perm), Owner: n.Owner,
		Group: n.Group, ModificationTime: n.Mtime, AccessTime: n.Atime}
	if n.IsDir() {
		st.Type, st.Children = pb.FileType_FILE_TYPE_DIRECTORY, n.Children
		return st
	}
	st.Type, st.Length, st.Replication, st.BlockSize = pb.FileType_FILE_TYPE_FILE, n.Length, n.Replication, n.BlockSize
	st.UnderConstruction = n.Holder != ""
	return st
}
