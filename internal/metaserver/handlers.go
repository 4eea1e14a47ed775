package metaserver

import (
	"context"

	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The handlers of the namespace's operations: each calls its row of the
// state machine's table.

// Mkdirs implements MetaService.
func (s *Server) Mkdirs(ctx context.Context, r *pb.MkdirsRequest) (*pb.MkdirsResponse, error) {
	return call[*pb.MkdirsResponse](ctx, s, sm.Mkdirs, r)
}

// Create implements MetaService.
func (s *Server) Create(ctx context.Context, r *pb.CreateRequest) (*pb.CreateResponse, error) {
	return call[*pb.CreateResponse](ctx, s, sm.Create, r)
}

// Complete implements MetaService.
func (s *Server) Complete(ctx context.Context, r *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	return call[*pb.CompleteResponse](ctx, s, sm.Complete, r)
}

// Rename implements MetaService.
func (s *Server) Rename(ctx context.Context, r *pb.RenameRequest) (*pb.RenameResponse, error) {
	return call[*pb.RenameResponse](ctx, s, sm.Rename, r)
}

// Delete implements MetaService.
func (s *Server) Delete(ctx context.Context, r *pb.DeleteRequest) (*pb.DeleteResponse, error) {
	return call[*pb.DeleteResponse](ctx, s, sm.Delete, r)
}

// SetPermission implements MetaService.
func (s *Server) SetPermission(ctx context.Context, r *pb.SetPermissionRequest) (*pb.SetAttrResponse, error) {
	return call[*pb.SetAttrResponse](ctx, s, sm.SetPermission, r)
}

// SetOwner implements MetaService.
func (s *Server) SetOwner(ctx context.Context, r *pb.SetOwnerRequest) (*pb.SetAttrResponse, error) {
	return call[*pb.SetAttrResponse](ctx, s, sm.SetOwner, r)
}

// SetTimes implements MetaService.
func (s *Server) SetTimes(ctx context.Context, r *pb.SetTimesRequest) (*pb.SetAttrResponse, error) {
	return call[*pb.SetAttrResponse](ctx, s, sm.SetTimes, r)
}

// GetFileStatus implements MetaService.
func (s *Server) GetFileStatus(ctx context.Context, r *pb.GetFileStatusRequest) (*pb.GetFileStatusResponse, error) {
	return call[*pb.GetFileStatusResponse](ctx, s, sm.GetFileStatus, r)
}

// Open implements MetaService.
func (s *Server) Open(ctx context.Context, r *pb.OpenRequest) (*pb.OpenResponse, error) {
	return call[*pb.OpenResponse](ctx, s, sm.Open, r)
}

// List implements MetaService: one page, so that a directory of any size
// streams through pages without being held in memory.
func (s *Server) List(ctx context.Context, r *pb.ListRequest) (*pb.ListResponse, error) {
	return call[*pb.ListResponse](ctx, s, sm.List, r)
}

// GetContentSummary implements MetaService from the directory aggregates.
func (s *Server) GetContentSummary(ctx context.Context, r *pb.GetContentSummaryRequest) (*pb.GetContentSummaryResponse, error) {
	return call[*pb.GetContentSummaryResponse](ctx, s, sm.GetContentSummary, r)
}

// ListNamespaces implements MetaService.
func (s *Server) ListNamespaces(ctx context.Context, r *pb.ListNamespacesRequest) (*pb.ListNamespacesResponse, error) {
	return call[*pb.ListNamespacesResponse](ctx, s, sm.ListNamespaces, r)
}

// Resync implements MetaService.
func (s *Server) Resync(ctx context.Context, r *pb.ResyncRequest) (*pb.ResyncResponse, error) {
	return call[*pb.ResyncResponse](ctx, s, sm.Resync, r)
}
