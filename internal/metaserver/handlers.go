package metaserver

import (
	"context"

	"google.golang.org/grpc"

	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Server is a member's gRPC surface: MetaService, a handler per method,
// each one line. The operations of the state machine's table go through
// its row and their service-side steps (call.go, steps.go); the others to
// the member's part that answers them.
type Server struct {
	pb.UnimplementedMetaServiceServer
	m *Member
}

// Mkdirs implements MetaService.
func (s *Server) Mkdirs(ctx context.Context, r *pb.MkdirsRequest) (*pb.MkdirsResponse, error) {
	return mutate(ctx, s.m, sm.Mkdirs, r)
}

// Create implements MetaService.
func (s *Server) Create(ctx context.Context, r *pb.CreateRequest) (*pb.CreateResponse, error) {
	return mutate(ctx, s.m, sm.Create, r)
}

// Complete implements MetaService.
func (s *Server) Complete(ctx context.Context, r *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	return mutate(ctx, s.m, sm.Complete, r)
}

// Rename implements MetaService.
func (s *Server) Rename(ctx context.Context, r *pb.RenameRequest) (*pb.RenameResponse, error) {
	return mutate(ctx, s.m, sm.Rename, r)
}

// Delete implements MetaService.
func (s *Server) Delete(ctx context.Context, r *pb.DeleteRequest) (*pb.DeleteResponse, error) {
	return mutate(ctx, s.m, sm.Delete, r)
}

// SetPermission implements MetaService.
func (s *Server) SetPermission(ctx context.Context, r *pb.SetPermissionRequest) (*pb.SetAttrResponse, error) {
	return mutate(ctx, s.m, sm.SetPermission, r)
}

// SetOwner implements MetaService.
func (s *Server) SetOwner(ctx context.Context, r *pb.SetOwnerRequest) (*pb.SetAttrResponse, error) {
	return mutate(ctx, s.m, sm.SetOwner, r)
}

// SetTimes implements MetaService.
func (s *Server) SetTimes(ctx context.Context, r *pb.SetTimesRequest) (*pb.SetAttrResponse, error) {
	return mutate(ctx, s.m, sm.SetTimes, r)
}

// GetFileStatus implements MetaService.
func (s *Server) GetFileStatus(ctx context.Context, r *pb.GetFileStatusRequest) (*pb.GetFileStatusResponse, error) {
	return query(ctx, s.m, sm.GetFileStatus, r)
}

// Open implements MetaService.
func (s *Server) Open(ctx context.Context, r *pb.OpenRequest) (*pb.OpenResponse, error) {
	return query(ctx, s.m, sm.Open, r)
}

// List implements MetaService: one page, so that a directory of any size
// streams through pages without being held in memory.
func (s *Server) List(ctx context.Context, r *pb.ListRequest) (*pb.ListResponse, error) {
	return query(ctx, s.m, sm.List, r)
}

// GetContentSummary implements MetaService from the directory aggregates.
func (s *Server) GetContentSummary(ctx context.Context, r *pb.GetContentSummaryRequest) (*pb.GetContentSummaryResponse, error) {
	return query(ctx, s.m, sm.GetContentSummary, r)
}

// RenewLease implements MetaService.
func (s *Server) RenewLease(ctx context.Context, r *pb.RenewLeaseRequest) (*pb.RenewLeaseResponse, error) {
	return s.m.renewLease(ctx, r)
}

// Flush implements MetaService.
func (s *Server) Flush(ctx context.Context, r *pb.FlushRequest) (*pb.FlushResponse, error) {
	return mutate(ctx, s.m, sm.Flush, r)
}

// ReadTail implements MetaService.
func (s *Server) ReadTail(ctx context.Context, r *pb.ReadTailRequest) (*pb.ReadTailResponse, error) {
	return query(ctx, s.m, sm.ReadTail, r)
}

// Append implements MetaService.
func (s *Server) Append(ctx context.Context, r *pb.AppendRequest) (*pb.AppendResponse, error) {
	return mutate(ctx, s.m, sm.Append, r)
}

// Concat implements MetaService.
func (s *Server) Concat(ctx context.Context, r *pb.ConcatRequest) (*pb.ConcatResponse, error) {
	return mutate(ctx, s.m, sm.Concat, r)
}

// Truncate implements MetaService.
func (s *Server) Truncate(ctx context.Context, r *pb.TruncateRequest) (*pb.TruncateResponse, error) {
	return mutate(ctx, s.m, sm.Truncate, r)
}

// RecoverLease implements MetaService.
func (s *Server) RecoverLease(ctx context.Context, r *pb.RecoverLeaseRequest) (*pb.RecoverLeaseResponse, error) {
	return s.m.recoverLease(ctx, r)
}

// Batch implements MetaService: every call is made as if it came alone.
func (s *Server) Batch(ctx context.Context, r *pb.BatchRequest) (*pb.BatchResponse, error) {
	return s.m.batch(ctx, r)
}

// CreateNamespace implements MetaService.
func (s *Server) CreateNamespace(ctx context.Context, r *pb.CreateNamespaceRequest) (*pb.CreateNamespaceResponse, error) {
	return mutate(ctx, s.m, sm.CreateNamespace, r)
}

// ListNamespaces implements MetaService.
func (s *Server) ListNamespaces(ctx context.Context, r *pb.ListNamespacesRequest) (*pb.ListNamespacesResponse, error) {
	return query(ctx, s.m, sm.ListNamespaces, r)
}

// DeleteNamespace implements MetaService.
func (s *Server) DeleteNamespace(ctx context.Context, r *pb.DeleteNamespaceRequest) (*pb.DeleteNamespaceResponse, error) {
	return mutate(ctx, s.m, sm.DeleteNamespace, r)
}

// RestoreNamespace implements MetaService.
func (s *Server) RestoreNamespace(ctx context.Context, r *pb.RestoreNamespaceRequest) (*pb.RestoreNamespaceResponse, error) {
	return mutate(ctx, s.m, sm.RestoreNamespace, r)
}

// GetServerDefaults implements MetaService.
func (s *Server) GetServerDefaults(context.Context, *pb.GetServerDefaultsRequest) (*pb.GetServerDefaultsResponse, error) {
	return s.m.serverDefaults(), nil
}

// Status implements MetaService. Any member answers, leader or not.
func (s *Server) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	return s.m.status(), nil
}

// GetServerStatus implements MetaService.
func (s *Server) GetServerStatus(ctx context.Context, r *pb.GetServerStatusRequest) (*pb.GetServerStatusResponse, error) {
	return query(ctx, s.m, sm.GetServerStatus, r)
}

// Resync implements MetaService.
func (s *Server) Resync(ctx context.Context, r *pb.ResyncRequest) (*pb.ResyncResponse, error) {
	return mutate(ctx, s.m, sm.Resync, r)
}

// GetProgress implements MetaService.
func (s *Server) GetProgress(ctx context.Context, r *pb.GetProgressRequest) (*pb.GetProgressResponse, error) {
	return s.m.progress(ctx, r)
}

// AddMember implements MetaService.
func (s *Server) AddMember(ctx context.Context, r *pb.AddMemberRequest) (*pb.MembershipResponse, error) {
	return s.m.addMember(ctx, r)
}

// RemoveMember implements MetaService.
func (s *Server) RemoveMember(ctx context.Context, r *pb.RemoveMemberRequest) (*pb.MembershipResponse, error) {
	return s.m.removeMember(ctx, r)
}

// TransferLeader implements MetaService.
func (s *Server) TransferLeader(ctx context.Context, r *pb.TransferLeaderRequest) (*pb.MembershipResponse, error) {
	return s.m.transferLeader(ctx, r)
}

// Heartbeat implements MetaService.
func (s *Server) Heartbeat(ctx context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	return s.m.heartbeat(ctx, r)
}

// ListWorkers implements MetaService.
func (s *Server) ListWorkers(context.Context, *pb.ListWorkersRequest) (*pb.ListWorkersResponse, error) {
	return s.m.liveWorkers()
}

// CreateToken implements MetaService.
func (s *Server) CreateToken(ctx context.Context, r *pb.CreateTokenRequest) (*pb.CreateTokenResponse, error) {
	return mutate(ctx, s.m, sm.CreateToken, r)
}

// RenewToken implements MetaService.
func (s *Server) RenewToken(ctx context.Context, r *pb.RenewTokenRequest) (*pb.RenewTokenResponse, error) {
	return mutate(ctx, s.m, sm.RenewToken, r)
}

// RevokeToken implements MetaService.
func (s *Server) RevokeToken(ctx context.Context, r *pb.RevokeTokenRequest) (*pb.RevokeTokenResponse, error) {
	return mutate(ctx, s.m, sm.RevokeToken, r)
}

// WhoAmI implements MetaService.
func (s *Server) WhoAmI(ctx context.Context, _ *pb.WhoAmIRequest) (*pb.WhoAmIResponse, error) {
	return s.m.tokens.WhoAmI(ctx)
}

// BeginImport implements MetaService.
func (s *Server) BeginImport(ctx context.Context, r *pb.BeginImportRequest) (*pb.BeginImportResponse, error) {
	return mutate(ctx, s.m, sm.BeginImport, r)
}

// UploadImport implements MetaService.
func (s *Server) UploadImport(stream grpc.ClientStreamingServer[pb.ImportChunk, pb.UploadImportResponse]) error {
	return s.m.core.imports.upload(stream.Context(), s.m, stream)
}

// GetImport implements MetaService.
func (s *Server) GetImport(ctx context.Context, r *pb.GetImportRequest) (*pb.GetImportResponse, error) {
	return s.m.core.imports.status(ctx, s.m, r)
}

// CommitImport implements MetaService.
func (s *Server) CommitImport(ctx context.Context, r *pb.CommitImportRequest) (*pb.CommitImportResponse, error) {
	return mutate(ctx, s.m, sm.CommitImport, r)
}

// AbortImport implements MetaService.
func (s *Server) AbortImport(ctx context.Context, r *pb.AbortImportRequest) (*pb.AbortImportResponse, error) {
	return mutate(ctx, s.m, sm.AbortImport, r)
}

// SetQuota implements MetaService.
func (s *Server) SetQuota(ctx context.Context, r *pb.SetQuotaRequest) (*pb.SetQuotaResponse, error) {
	return mutate(ctx, s.m, sm.SetQuota, r)
}

// SetXAttr implements MetaService.
func (s *Server) SetXAttr(ctx context.Context, r *pb.SetXAttrRequest) (*pb.SetXAttrResponse, error) {
	return mutate(ctx, s.m, sm.SetXAttr, r)
}

// RemoveXAttr implements MetaService.
func (s *Server) RemoveXAttr(ctx context.Context, r *pb.RemoveXAttrRequest) (*pb.RemoveXAttrResponse, error) {
	return mutate(ctx, s.m, sm.RemoveXAttr, r)
}

// GetXAttrs implements MetaService.
func (s *Server) GetXAttrs(ctx context.Context, r *pb.GetXAttrsRequest) (*pb.GetXAttrsResponse, error) {
	return query(ctx, s.m, sm.GetXAttrs, r)
}

// ListXAttrs implements MetaService.
func (s *Server) ListXAttrs(ctx context.Context, r *pb.ListXAttrsRequest) (*pb.ListXAttrsResponse, error) {
	return query(ctx, s.m, sm.ListXAttrs, r)
}

// ModifyAcl implements MetaService.
func (s *Server) ModifyAcl(ctx context.Context, r *pb.ModifyAclRequest) (*pb.ModifyAclResponse, error) {
	return mutate(ctx, s.m, sm.ModifyAcl, r)
}

// GetAclStatus implements MetaService.
func (s *Server) GetAclStatus(ctx context.Context, r *pb.GetAclStatusRequest) (*pb.GetAclStatusResponse, error) {
	return query(ctx, s.m, sm.GetAclStatus, r)
}

// SetStoragePolicy implements MetaService.
func (s *Server) SetStoragePolicy(ctx context.Context, r *pb.SetStoragePolicyRequest) (*pb.SetStoragePolicyResponse, error) {
	return mutate(ctx, s.m, sm.SetStoragePolicy, r)
}

// GetStoragePolicy implements MetaService.
func (s *Server) GetStoragePolicy(ctx context.Context, r *pb.GetStoragePolicyRequest) (*pb.GetStoragePolicyResponse, error) {
	return query(ctx, s.m, sm.GetStoragePolicy, r)
}

// GetStoragePolicies implements MetaService.
func (s *Server) GetStoragePolicies(ctx context.Context, r *pb.GetStoragePoliciesRequest) (*pb.GetStoragePoliciesResponse, error) {
	return query(ctx, s.m, sm.GetStoragePolicies, r)
}
