package metaserver

import (
	"context"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// GetFileStatus implements MetaService.
func (s *Server) GetFileStatus(ctx context.Context, r *pb.GetFileStatusRequest) (*pb.GetFileStatusResponse, error) {
	var n *kvschema.Inode
	err := s.view(ctx, r.Header, func(rd kv.Reader, c namespace.Caller, ns string) (err error) {
		n, err = s.fs.Stat(rd, c, ns, r.Path)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &pb.GetFileStatusResponse{Status: fileStatus(n)}, nil
}

// Open implements MetaService.
func (s *Server) Open(ctx context.Context, r *pb.OpenRequest) (*pb.OpenResponse, error) {
	var n *kvschema.Inode
	var content *namespace.Content
	var rec *kvschema.Namespace
	err := s.view(ctx, r.Header, func(rd kv.Reader, c namespace.Caller, ns string) (err error) {
		if n, content, err = s.fs.Open(rd, c, ns, r.Path); err == nil {
			rec, err = namespace.Lookup(rd, ns)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	resp := &pb.OpenResponse{Status: fileStatus(n), InlineData: content.Inline, Inline: n.Inline, StoreUri: rec.StoreURI}
	for _, b := range content.Blocks {
		resp.Blocks = append(resp.Blocks, &pb.Block{BlockId: b.ID, Offset: b.Offset, Length: b.Length})
	}
	return resp, nil
}

// List implements MetaService: one page, so that a directory of any size
// streams through pages without being held in memory.
func (s *Server) List(ctx context.Context, r *pb.ListRequest) (*pb.ListResponse, error) {
	limit := int(r.Limit)
	if limit <= 0 {
		limit = defaultPage
	}
	limit = min(limit, maxPage)
	var l *namespace.Listing
	err := s.view(ctx, r.Header, func(rd kv.Reader, c namespace.Caller, ns string) (err error) {
		l, err = s.fs.List(rd, c, ns, r.Path, r.StartAfter, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	resp := &pb.ListResponse{HasMore: l.More, Status: fileStatus(l.Self), Entries: make([]*pb.FileStatus, len(l.Entries))}
	for i, n := range l.Entries {
		resp.Entries[i] = fileStatus(n)
	}
	return resp, nil
}

// GetContentSummary implements MetaService from the directory aggregates.
func (s *Server) GetContentSummary(ctx context.Context, r *pb.GetContentSummaryRequest) (*pb.GetContentSummaryResponse, error) {
	var sum namespace.Summary
	var n *kvschema.Inode
	err := s.view(ctx, r.Header, func(rd kv.Reader, c namespace.Caller, ns string) (err error) {
		if sum, err = s.fs.ContentSummary(rd, c, ns, r.Path); err == nil {
			n, err = s.fs.Stat(rd, c, ns, r.Path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	repl := uint64(1)
	if !n.IsDir() {
		repl = uint64(max(n.Replication, 1))
	}
	return &pb.GetContentSummaryResponse{Length: sum.Length, FileCount: sum.Files,
		DirectoryCount: sum.Dirs, SpaceConsumed: sum.Length * repl}, nil
}

// ListNamespaces implements MetaService.
func (s *Server) ListNamespaces(ctx context.Context, r *pb.ListNamespacesRequest) (*pb.ListNamespacesResponse, error) {
	var list []*kvschema.Namespace
	err := s.view(ctx, r.Header, func(rd kv.Reader, _ namespace.Caller, _ string) (err error) {
		list, err = namespace.Namespaces(rd)
		return err
	})
	if err != nil {
		return nil, err
	}
	resp := &pb.ListNamespacesResponse{}
	for _, ns := range list {
		resp.Namespaces = append(resp.Namespaces, &pb.NamespaceInfo{Name: ns.Name,
			Mode: pb.NamespaceMode(ns.Mode), StoreUri: ns.StoreURI, Created: ns.Created})
	}
	return resp, nil
}

// Version is the build's version, set by the linker.
var Version = "dev"

func fileStatus(n *kvschema.Inode) *pb.FileStatus {
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
