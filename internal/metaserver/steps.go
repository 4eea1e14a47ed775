package metaserver

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/cachemode"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The service-side table: for every operation of the state machine's table
// (statemachine.Ops), what the service does for it besides applying or
// reading it, in four steps, each a named function or explicitly none.
// call.go carries them out, in this order, for a call alone and for each
// call of a batch; TestEveryOperationHasItsSteps fails on an operation
// without an entry.
//
// Adding an operation: its row in statemachine (table.go: the row, its
// apply or read function; its messages and method in proto/; its cases in
// statemachine/testdata/), its entry here, its handler (handlers.go, one
// line), and its client methods.
type steps struct {
	// admit checks the request before anything is read or proposed, with
	// its caller set from the call's token: what the state machine cannot
	// check, because a check inside it would apply the commands already in
	// the log differently from the members that applied them before the
	// check existed. It may complete the request (a default the service
	// sets).
	admit func(ctx context.Context, m *Member, req sm.Request) error
	// prepare is the bucket side in a cache-mode namespace
	// (internal/cachemode).
	prepare *cachemode.Step
	// finish completes the answer: what follows the apply or the read
	// (leases renewed, the namespace's settings in the answer), or what
	// the service does about its failure.
	finish func(ctx context.Context, m *Member, req sm.Request, resp proto.Message, err error) (proto.Message, error)
	// grant adds the block access token to an answer that hands out a
	// file's blocks (internal/metaserver/auth).
	grant func(ctx context.Context, m *Member, req sm.Request, resp proto.Message) error
}

// The named "none" of each step.
var (
	admitAny = func(context.Context, *Member, sm.Request) error { return nil }
	asIs     = func(_ context.Context, _ *Member, _ sm.Request, resp proto.Message, err error) (proto.Message, error) {
		return resp, err
	}
	noToken = func(context.Context, *Member, sm.Request, proto.Message) error { return nil }
)

// service is what a command of the service's own takes: no client sends it.
var service = steps{admit: refuseClients, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken}

// read is what a read of a path takes: its bucket side, nothing else.
func read(prepare *cachemode.Step) steps {
	return steps{admit: admitAny, prepare: prepare, finish: asIs, grant: noToken}
}

var table = map[*sm.Op]steps{
	sm.Mkdirs.Op: {admit: newName("mkdirs", (*pb.MkdirsRequest).GetPath), prepare: cachemode.Mkdirs,
		finish: asIs, grant: noToken},
	sm.Create.Op:   {admit: admitCreate, prepare: cachemode.Create, finish: finishCreate, grant: grantCreate},
	sm.Complete.Op: {admit: admitAny, prepare: cachemode.Complete, finish: asIs, grant: noToken},
	sm.Rename.Op: {admit: newName("rename to", (*pb.RenameRequest).GetDst), prepare: cachemode.Rename,
		finish: asIs, grant: noToken},
	sm.Delete.Op:           {admit: admitAny, prepare: cachemode.Delete, finish: asIs, grant: noToken},
	sm.SetPermission.Op:    {admit: admitAny, prepare: cachemode.SetPermission, finish: asIs, grant: noToken},
	sm.SetOwner.Op:         {admit: admitAny, prepare: cachemode.SetOwner, finish: asIs, grant: noToken},
	sm.SetTimes.Op:         {admit: admitAny, prepare: cachemode.SetTimes, finish: asIs, grant: noToken},
	sm.RecoverLease.Op:     {admit: admitAny, prepare: cachemode.RecoverLease, finish: asIs, grant: noToken},
	sm.CreateNamespace.Op:  {admit: admitNamespace, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.Flush.Op:            {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: grantFlush},
	sm.Append.Op:           {admit: admitAny, prepare: cachemode.NoBucketSide, finish: finishAppend, grant: grantAppend},
	sm.Truncate.Op:         {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.Concat.Op:           {admit: admitConcat, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.Resync.Op:           {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.DeleteNamespace.Op:  {admit: admitDeleteNamespace, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.RestoreNamespace.Op: {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.CreateToken.Op:      {admit: admitCreateToken, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.RenewToken.Op:       {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.RevokeToken.Op:      {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.BeginImport.Op: {admit: superuserOnly("import a namespace"), prepare: cachemode.NoBucketSide,
		finish: asIs, grant: noToken},
	sm.CommitImport.Op: {admit: admitCommitImport, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.AbortImport.Op: {admit: superuserOnly("abort an import"), prepare: cachemode.NoBucketSide,
		finish: asIs, grant: noToken},

	sm.GetFileStatus.Op:     read(cachemode.GetFileStatus),
	sm.Open.Op:              {admit: admitAny, prepare: cachemode.Open, finish: asIs, grant: grantOpen},
	sm.List.Op:              read(cachemode.List),
	sm.GetContentSummary.Op: read(cachemode.GetContentSummary),
	sm.ListNamespaces.Op:    read(cachemode.NoBucketSide),
	sm.ReadTail.Op:          read(cachemode.NoBucketSide),
	sm.GetServerStatus.Op: {admit: superuserOnly("read the server's status"), prepare: cachemode.NoBucketSide,
		finish: finishServerStatus, grant: noToken},

	sm.Purge.Op:          service,
	sm.ExpireLease.Op:    service,
	sm.GarbageDone.Op:    service,
	sm.PurgeNamespace.Op: service,
	sm.ForgetRequests.Op: service,
	sm.SetSecret.Op:      service,
	sm.SyncPath.Op:       service,
	sm.SyncListing.Op:    service,
	sm.MarkStale.Op:      service,
	sm.ForgetTokens.Op:   service,

	// Quotas, extended attributes, ACLs and storage policies: the state
	// machine checks them all (a quota's superuser too, in HDFS's words).
	sm.SetQuota.Op:           {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.SetXAttr.Op:           {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.RemoveXAttr.Op:        {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.ModifyAcl.Op:          {admit: admitAny, prepare: cachemode.ModifyAcl, finish: asIs, grant: noToken},
	sm.SetStoragePolicy.Op:   {admit: admitAny, prepare: cachemode.NoBucketSide, finish: asIs, grant: noToken},
	sm.GetXAttrs.Op:          read(cachemode.NoBucketSide),
	sm.ListXAttrs.Op:         read(cachemode.NoBucketSide),
	sm.GetAclStatus.Op:       read(cachemode.GetAclStatus),
	sm.GetStoragePolicy.Op:   read(cachemode.NoBucketSide),
	sm.GetStoragePolicies.Op: read(cachemode.NoBucketSide),
}

// refuseClients refuses a command of the service's own from a client (none
// can send one: no method takes it).
func refuseClients(context.Context, *Member, sm.Request) error {
	return fserr.Errorf(fserr.ErrInvalidArgument, "a command of the service's own")
}

// newName checks the path whose missing components a request may create
// (a create's, a mkdirs', a rename's destination) against the rule for new
// names (fspath.SplitNew: no ':', no control character). It runs at the
// door, on the leader, before anything is proposed: a check inside the
// state machine would apply commands already in the log differently from
// the members that applied them before the rule existed.
func newName[Req sm.Request](op string, path func(Req) string) func(context.Context, *Member, sm.Request) error {
	return func(_ context.Context, _ *Member, req sm.Request) error {
		p := path(req.(Req))
		if _, err := fspath.SplitNew(p); err != nil {
			return &sm.PathError{Op: op, Path: p, Err: err}
		}
		return nil
	}
}

var createName = newName("create", (*pb.CreateRequest).GetPath)

// admitCreate checks a create's new names and that it names its writer.
func admitCreate(ctx context.Context, m *Member, req sm.Request) error {
	r := req.(*pb.CreateRequest)
	if err := createName(ctx, m, r); err != nil {
		return err
	}
	if r.GetHeader().GetClientName() == "" {
		return fserr.Errorf(fserr.ErrInvalidArgument, "create %s: request header has no client name", r.GetPath())
	}
	return nil
}

// superuserOnly admits a superuser's request only, for what.
func superuserOnly(what string) func(context.Context, *Member, sm.Request) error {
	return func(ctx context.Context, m *Member, req sm.Request) error {
		return m.tokens.RequireSuperuser(ctx, req.GetHeader(), what)
	}
}

// admitDeleteNamespace refuses, if the namespace holds anything, a request
// that says nothing of what to do then: only commands logged before the
// mode existed meant "remove it at once".
func admitDeleteNamespace(_ context.Context, _ *Member, req sm.Request) error {
	r := req.(*pb.DeleteNamespaceRequest)
	if r.GetMode() == pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_UNSPECIFIED {
		r.Mode = pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_IF_EMPTY
	}
	return nil
}

// admitCreateToken lets a superuser issue tokens, on the leader, of names
// and lifetimes the rules allow (auth.Tokens.Prepare).
func admitCreateToken(ctx context.Context, m *Member, req sm.Request) error {
	r := req.(*pb.CreateTokenRequest)
	if err := m.tokens.RequireSuperuser(ctx, r.GetHeader(), "create a token for "+r.GetUser()); err != nil {
		return err
	}
	if !m.core.IsLeader() {
		return m.core.NotLeader()
	}
	return m.tokens.Prepare(ctx, r)
}

// admitCommitImport lets a superuser commit an import, on the leader, once
// every member holds its tables (importer.stageAll); a new cache-mode
// namespace's bucket is probed first, as for CreateNamespace.
func admitCommitImport(ctx context.Context, m *Member, req sm.Request) error {
	r := req.(*pb.CommitImportRequest)
	if err := m.tokens.RequireSuperuser(ctx, r.GetHeader(), "import a namespace"); err != nil {
		return err
	}
	if !m.core.IsLeader() {
		return m.core.NotLeader()
	}
	if r.GetNamespace().GetName() == "" {
		return fserr.Errorf(fserr.ErrInvalidArgument, "commit import %s: no namespace", r.GetImportId())
	}
	if m.namespaceRecord(&pb.Header{Namespace: r.GetNamespace().GetName()}) == nil {
		if err := admitNamespace(ctx, m, &pb.CreateNamespaceRequest{Header: r.GetHeader(), Namespace: r.GetNamespace()}); err != nil {
			return err
		}
	}
	return m.core.imports.stageAll(ctx, r)
}

// finishCreate answers a create. A file held by a writer that stopped
// renewing for longer than the soft limit is recovered and taken over. A
// complete create holds no lease: nothing is left to renew.
func finishCreate(ctx context.Context, m *Member, req sm.Request, resp proto.Message, err error) (proto.Message, error) {
	r := req.(*pb.CreateRequest)
	if errors.Is(err, fserr.ErrLeaseConflict) && r.GetOverwrite() && m.leases.takeOverExpired(ctx, r) {
		resp, err = m.applyMutation(ctx, sm.Create.Op, r)
	}
	if err != nil {
		return nil, err
	}
	cr := resp.(*pb.CreateResponse)
	cr.InlineLimit = uint32(m.cfg.Namespace.InlineLimit)
	if !r.GetComplete() {
		m.leases.renew(r.GetHeader().GetClientName())
		if rec := m.namespaceRecord(r.GetHeader()); rec != nil {
			cr.StoreUri = rec.StoreURI
			if rec.IsCache() {
				cr.ObjectKey = sm.ObjectKey(r.GetPath())
			}
		}
	}
	return cr, nil
}

// finishAppend answers an append: the writer's lease renewed, and where
// its blocks go.
func finishAppend(_ context.Context, m *Member, req sm.Request, resp proto.Message, err error) (proto.Message, error) {
	if err != nil {
		return nil, err
	}
	ar := resp.(*pb.AppendResponse)
	m.leases.renew(req.GetHeader().GetClientName())
	ar.InlineLimit = uint32(m.cfg.Namespace.InlineLimit)
	if rec := m.namespaceRecord(req.GetHeader()); rec != nil {
		ar.StoreUri = rec.StoreURI
	}
	return ar, nil
}

// finishServerStatus adds the member's own to what the state holds: its
// version, its start, its live workers.
func finishServerStatus(_ context.Context, m *Member, _ sm.Request, resp proto.Message, err error) (proto.Message, error) {
	if err != nil {
		return nil, err
	}
	st := resp.(*pb.GetServerStatusResponse)
	st.Version, st.Started = Version, m.started.UnixMilli()
	st.LiveWorkers = uint32(len(m.workers.live(m.core.Now())))
	return st, nil
}

// grantOpen lets the reader read the file's blocks; a superuser's Open
// with cache_admin, load them into the caches and drop them.
func grantOpen(ctx context.Context, m *Member, req sm.Request, resp proto.Message) error {
	r, open := resp.(*pb.OpenResponse), req.(*pb.OpenRequest)
	mode := blocktoken.Read
	if open.GetCacheAdmin() {
		if !m.core.IsSuperuser(sm.CallerOf(req.GetHeader())) {
			return fserr.Errorf(fserr.ErrPermission, "%s: only a superuser may load files into the caches or drop them (%s is not one)",
				open.GetPath(), req.GetHeader().GetUser())
		}
		mode = blocktoken.Cache
	}
	if r.Inline {
		return nil
	}
	var err error
	r.BlockToken, r.BlockTokenExpires, err = m.blocks.Issue(ctx, mode, req.GetHeader().GetNamespace(),
		r.GetStatus().GetInodeId(), r.ObjectKey, r.StoragePolicy)
	if err != nil {
		return err
	}
	return grantObjects(ctx, m, mode, req.GetHeader().GetNamespace(), r)
}

// grantObjects adds the tokens of the inodes other than the file's whose
// prefixes hold objects of its blocks (a concat moved them).
func grantObjects(ctx context.Context, m *Member, mode blocktoken.Mode, ns string, r *pb.OpenResponse) error {
	seen := map[uint64]bool{}
	for _, b := range r.GetBlocks() {
		ino := b.GetObjectInode()
		if ino == 0 || seen[ino] {
			continue
		}
		seen[ino] = true
		tok, _, err := m.blocks.Issue(ctx, mode, ns, ino, "", r.StoragePolicy)
		if err != nil {
			return err
		}
		r.ObjectTokens = append(r.ObjectTokens, &pb.ObjectToken{InodeId: ino, Token: tok})
	}
	return nil
}

// grantCreate lets the writer of a file being written write its blocks.
func grantCreate(ctx context.Context, m *Member, req sm.Request, resp proto.Message) error {
	r := resp.(*pb.CreateResponse)
	if r.StoreUri == "" {
		return nil
	}
	var err error
	r.BlockToken, r.BlockTokenExpires, err = m.blocks.Issue(ctx, blocktoken.Write, req.GetHeader().GetNamespace(),
		r.GetStatus().GetInodeId(), r.ObjectKey, r.StoragePolicy)
	return err
}

// grantAppend lets the appender write the file's blocks.
func grantAppend(ctx context.Context, m *Member, req sm.Request, resp proto.Message) error {
	r := resp.(*pb.AppendResponse)
	var err error
	r.BlockToken, r.BlockTokenExpires, err = m.blocks.Issue(ctx, blocktoken.Write, req.GetHeader().GetNamespace(),
		r.GetStatus().GetInodeId(), "", r.StoragePolicy)
	return err
}

// grantFlush lets the writer go on writing the file's blocks.
func grantFlush(ctx context.Context, m *Member, req sm.Request, resp proto.Message) error {
	r := resp.(*pb.FlushResponse)
	var err error
	r.BlockToken, r.BlockTokenExpires, err = m.blocks.Issue(ctx, blocktoken.Write, req.GetHeader().GetNamespace(),
		req.(*pb.FlushRequest).GetInodeId(), "", r.StoragePolicy)
	return err
}
