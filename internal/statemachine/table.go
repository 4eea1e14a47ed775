package statemachine

import (
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The table of operations. Adding one takes a row here, its apply (or
// read) function, its messages and method in proto/ (with the method's
// strata.v1.method_kind option, which the clients read), and its tests in
// testdata/. The service's handler is one line calling the row.

// The namespace's mutations.
var (
	Mkdirs = mutation(Op{Name: "Mkdirs", Batchable: true},
		func(r *pb.MkdirsRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Mkdirs{Mkdirs: r}} },
		(*pb.Command).GetMkdirs, applyMkdirs,
		func(created bool) *pb.MkdirsResponse { return &pb.MkdirsResponse{Created: created} }, keptFlag)
	Create = mutation(Op{Name: "Create", Batchable: true, FreesBlocks: true},
		func(r *pb.CreateRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Create{Create: r}} },
		(*pb.Command).GetCreate, applyCreate,
		func(n *kvschema.Inode) *pb.CreateResponse {
			// n.Policy is the file's effective policy (namespace.Create).
			return &pb.CreateResponse{Status: FileStatus(n), StoragePolicy: uint32(n.Policy)}
		}, keptInode)
	Complete = mutation(Op{Name: "Complete", Batchable: true},
		func(r *pb.CompleteRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Complete{Complete: r}} },
		(*pb.Command).GetComplete, applyComplete,
		func(None) *pb.CompleteResponse { return &pb.CompleteResponse{} }, keptNothing[None]())
	Rename = mutation(Op{Name: "Rename", Batchable: true, FreesBlocks: true},
		func(r *pb.RenameRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Rename{Rename: r}} },
		(*pb.Command).GetRename, applyRename,
		func(final string) *pb.RenameResponse { return &pb.RenameResponse{FinalPath: final} }, keptText)
	Delete = mutation(Op{Name: "Delete", Batchable: true, FreesBlocks: true, Detaches: true},
		func(r *pb.DeleteRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Delete{Delete: r}} },
		(*pb.Command).GetDelete, applyDelete,
		func(deleted bool) *pb.DeleteResponse { return &pb.DeleteResponse{Deleted: deleted} }, keptFlag)
	SetPermission = mutation(Op{Name: "SetPermission"},
		func(r *pb.SetPermissionRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_SetPermission{SetPermission: r}}
		},
		(*pb.Command).GetSetPermission, applySetPermission, attrResponse, keptNothing[None]())
	SetOwner = mutation(Op{Name: "SetOwner"},
		func(r *pb.SetOwnerRequest) *pb.Command { return &pb.Command{Op: &pb.Command_SetOwner{SetOwner: r}} },
		(*pb.Command).GetSetOwner, applySetOwner, attrResponse, keptNothing[None]())
	SetTimes = mutation(Op{Name: "SetTimes"},
		func(r *pb.SetTimesRequest) *pb.Command { return &pb.Command{Op: &pb.Command_SetTimes{SetTimes: r}} },
		(*pb.Command).GetSetTimes, applySetTimes, attrResponse, keptNothing[None]())
	RecoverLease = mutation(Op{Name: "RecoverLease", FreesBlocks: true},
		func(r *pb.RecoverLeaseRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_RecoverLease{RecoverLease: r}}
		},
		(*pb.Command).GetRecoverLease, applyRecoverLease,
		func(closed bool) *pb.RecoverLeaseResponse { return &pb.RecoverLeaseResponse{Closed: closed} }, keptFlag)
	CreateNamespace = mutation(Op{Name: "CreateNamespace", Namespaces: true},
		func(r *pb.CreateNamespaceRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_CreateNamespace{CreateNamespace: r}}
		},
		(*pb.Command).GetCreateNamespace, applyCreateNamespace,
		func(None) *pb.CreateNamespaceResponse { return &pb.CreateNamespaceResponse{} }, keptNothing[None]())
	// Flush's answer is not kept: a retry answers length 0, and the
	// default policy.
	Flush = mutation(Op{Name: "Flush"},
		func(r *pb.FlushRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Flush{Flush: r}} },
		(*pb.Command).GetFlush, applyFlush,
		func(f namespace.Flushed) *pb.FlushResponse {
			return &pb.FlushResponse{Length: f.Length, StoragePolicy: uint32(f.Policy)}
		}, keptNothing[namespace.Flushed]())
	Append = mutation(Op{Name: "Append"},
		func(r *pb.AppendRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Append{Append: r}} },
		(*pb.Command).GetAppend, applyAppend,
		func(a Appended) *pb.AppendResponse {
			return &pb.AppendResponse{Status: FileStatus(a.Inode), InlineData: a.Again, StoragePolicy: uint32(a.Inode.Policy)}
		},
		kept[Appended]{keep: func(a Appended) kvschema.Answer { return keptInode.keep(a.Inode) },
			restore: func(k kvschema.Answer) Appended { return Appended{Inode: keptInode.restore(k)} }})
	Truncate = mutation(Op{Name: "Truncate", FreesBlocks: true},
		func(r *pb.TruncateRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Truncate{Truncate: r}} },
		(*pb.Command).GetTruncate, applyTruncate,
		func(None) *pb.TruncateResponse { return &pb.TruncateResponse{} }, keptNothing[None]())
	Concat = mutation(Op{Name: "Concat"},
		func(r *pb.ConcatRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Concat{Concat: r}} },
		(*pb.Command).GetConcat, applyConcat,
		func(None) *pb.ConcatResponse { return &pb.ConcatResponse{} }, keptNothing[None]())
	Resync = mutation(Op{Name: "Resync"},
		func(r *pb.ResyncRequest) *pb.Command { return &pb.Command{Op: &pb.Command_Resync{Resync: r}} },
		(*pb.Command).GetResync, applyResync,
		func(entries uint64) *pb.ResyncResponse { return &pb.ResyncResponse{Entries: entries} }, keptNothing[uint64]())
	DeleteNamespace = mutation(Op{Name: "DeleteNamespace", FreesBlocks: true, Detaches: true, Namespaces: true},
		func(r *pb.DeleteNamespaceRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_DeleteNamespace{DeleteNamespace: r}}
		},
		(*pb.Command).GetDeleteNamespace, applyDeleteNamespace, deletedNamespace, keptInode)
	RestoreNamespace = mutation(Op{Name: "RestoreNamespace"},
		func(r *pb.RestoreNamespaceRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_RestoreNamespace{RestoreNamespace: r}}
		},
		(*pb.Command).GetRestoreNamespace,
		func(e env, tx kv.Txn, r *pb.RestoreNamespaceRequest) (None, error) {
			return None{}, e.fs.RestoreNamespace(tx, CallerOf(r.GetHeader()), r.GetName())
		},
		func(None) *pb.RestoreNamespaceResponse { return &pb.RestoreNamespaceResponse{} }, keptNothing[None]())
)

// Appended is what an append produced: the file, and the bytes its writer
// writes again first (a partial last block's, or the flushed tail's).
type Appended struct {
	Inode *kvschema.Inode
	Again []byte
}

// The service's own commands.
var (
	Purge = internal(Op{Name: "Purge", FreesBlocks: true},
		func(c *pb.PurgeCommand) *pb.Command { return &pb.Command{Op: &pb.Command_Purge{Purge: c}} },
		(*pb.Command).GetPurge,
		func(_ env, tx kv.Txn, c *pb.PurgeCommand) (int, error) { return namespace.Purge(tx, int(c.GetLimit())) })
	ExpireLease = internal(Op{Name: "ExpireLease", FreesBlocks: true},
		func(c *pb.ExpireLeaseCommand) *pb.Command {
			return &pb.Command{Op: &pb.Command_ExpireLease{ExpireLease: c}}
		},
		(*pb.Command).GetExpireLease,
		func(e env, tx kv.Txn, c *pb.ExpireLeaseCommand) (None, error) {
			return None{}, e.fs.ExpireLease(tx, c.GetHolder(), c.GetInodeId(), blockFromProto(c.GetTailBlock()))
		})
	GarbageDone = internal(Op{Name: "GarbageDone"},
		func(c *pb.GarbageDoneCommand) *pb.Command {
			return &pb.Command{Op: &pb.Command_GarbageDone{GarbageDone: c}}
		},
		(*pb.Command).GetGarbageDone,
		func(_ env, tx kv.Txn, c *pb.GarbageDoneCommand) (None, error) {
			return None{}, namespace.GarbageDone(tx, c.GetKeys())
		})
	PurgeNamespace = internal(Op{Name: "PurgeNamespace", FreesBlocks: true, Detaches: true},
		func(c *pb.PurgeNamespaceCommand) *pb.Command {
			return &pb.Command{Op: &pb.Command_PurgeNamespace{PurgeNamespace: c}}
		},
		(*pb.Command).GetPurgeNamespace,
		func(e env, tx kv.Txn, c *pb.PurgeNamespaceCommand) (bool, error) {
			return namespace.PurgeNamespace(tx, e.now, c.GetName(), c.GetDeleted())
		})
	ForgetRequests = internal(Op{Name: "ForgetRequests"},
		func(c *pb.ForgetRequestsCommand) *pb.Command {
			return &pb.Command{Op: &pb.Command_ForgetRequests{ForgetRequests: c}}
		},
		(*pb.Command).GetForgetRequests,
		func(_ env, tx kv.Txn, c *pb.ForgetRequestsCommand) (int, error) {
			return forgetRequests(tx, c.GetBefore(), int(c.GetLimit()))
		})
)

// SetSecret records a cluster secret, once: the first one recorded under a
// name stays, so two leaders that both drew one keep the first's. (Tokens:
// some are the keys tokens are signed with.)
var SetSecret = internal(Op{Name: "SetSecret", Tokens: true},
	func(c *pb.SetSecretCommand) *pb.Command { return &pb.Command{Op: &pb.Command_SetSecret{SetSecret: c}} },
	(*pb.Command).GetSetSecret,
	func(_ env, tx kv.Txn, c *pb.SetSecretCommand) (bool, error) {
		key := kvschema.SecretKey(c.GetName())
		if _, ok, err := tx.Get(key); err != nil || ok {
			return false, err
		}
		if len(c.GetSecret()) == 0 {
			return false, fserr.Errorf(fserr.ErrInvalidArgument, "an empty secret")
		}
		tx.Set(key, c.GetSecret())
		return true, nil
	})

// Secret returns the cluster secret called name from the applied state, or
// nil if none was recorded.
func Secret(r kv.Reader, name string) ([]byte, error) {
	v, ok, err := r.Get(kvschema.SecretKey(name))
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// The commands of cache mode: what the leader found in a namespace's bucket.
var (
	SyncPath = internal(Op{Name: "SyncPath", Detaches: true},
		func(c *pb.SyncPathCommand) *pb.Command { return &pb.Command{Op: &pb.Command_SyncPath{SyncPath: c}} },
		(*pb.Command).GetSyncPath,
		func(e env, tx kv.Txn, c *pb.SyncPathCommand) (None, error) {
			var entry *namespace.BucketEntry
			if c.GetEntry() != nil {
				be := bucketEntry(c.GetEntry())
				entry = &be
			}
			return None{}, e.fs.SyncPath(tx, e.now, c.GetNamespace(), c.GetPath(), entry)
		})
	SyncListing = internal(Op{Name: "SyncListing", Detaches: true},
		func(c *pb.SyncListingCommand) *pb.Command {
			return &pb.Command{Op: &pb.Command_SyncListing{SyncListing: c}}
		},
		(*pb.Command).GetSyncListing,
		func(e env, tx kv.Txn, c *pb.SyncListingCommand) (None, error) {
			page := make([]namespace.BucketEntry, len(c.GetEntries()))
			for i, be := range c.GetEntries() {
				page[i] = bucketEntry(be)
			}
			return None{}, e.fs.SyncListing(tx, e.now, c.GetNamespace(), c.GetPath(), page, c.GetStart(), c.GetLast())
		})
)

// MarkStale makes a cache-mode subtree stale on the service's own behalf.
var MarkStale = internal(Op{Name: "MarkStale"},
	func(c *pb.MarkStaleCommand) *pb.Command { return &pb.Command{Op: &pb.Command_MarkStale{MarkStale: c}} },
	(*pb.Command).GetMarkStale,
	func(e env, tx kv.Txn, c *pb.MarkStaleCommand) (None, error) {
		return None{}, e.fs.MarkStale(tx, e.now, c.GetNamespace(), c.GetPath())
	})

func bucketEntry(e *pb.BucketEntry) namespace.BucketEntry {
	return namespace.BucketEntry{Name: e.GetName(), Dir: e.GetDirectory(), Size: e.GetSize(), ETag: e.GetEtag(),
		Modified: e.GetModified()}
}

// The reads.
var (
	GetFileStatus     = query(Op{Name: "GetFileStatus", Batchable: true}, readFileStatus)
	Open              = query(Op{Name: "Open", Batchable: true}, readOpen)
	List              = query(Op{Name: "List"}, readList)
	GetContentSummary = query(Op{Name: "GetContentSummary"}, readContentSummary)
	ListNamespaces    = query(Op{Name: "ListNamespaces"}, readNamespaces)
	ReadTail          = query(Op{Name: "ReadTail"}, readTail)
	GetServerStatus   = query(Op{Name: "GetServerStatus"}, readServerStatus)
)

func applyMkdirs(e env, tx kv.Txn, r *pb.MkdirsRequest) (bool, error) {
	h := r.GetHeader()
	return e.fs.Mkdirs(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), perm(r.GetPermission()),
		perm(r.GetUmask()), r.GetCreateParents())
}

func applyCreate(e env, tx kv.Txn, r *pb.CreateRequest) (*kvschema.Inode, error) {
	h := r.GetHeader()
	return e.fs.Create(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), namespace.CreateOptions{
		Perm: perm(r.GetPermission()), Umask: perm(r.GetUmask()), Overwrite: r.GetOverwrite(),
		Parents: r.GetCreateParents(), Replication: r.GetReplication(), BlockSize: r.GetBlockSize(),
		Holder: h.GetClientName(), Closed: r.GetComplete(), Data: r.GetInlineData(), ETag: r.GetObjectEtag()})
}

func applyComplete(e env, tx kv.Txn, r *pb.CompleteRequest) (None, error) {
	h := r.GetHeader()
	return None{}, e.fs.Complete(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), namespace.CompleteOptions{
		Inode: r.GetInodeId(), Holder: h.GetClientName(), Length: r.GetLength(), Blocks: blocksFromProto(r.GetBlocks()),
		Inline: r.GetInline(), Data: r.GetInlineData(), ETag: r.GetObjectEtag()})
}

func applyRename(e env, tx kv.Txn, r *pb.RenameRequest) (string, error) {
	h := r.GetHeader()
	return e.fs.Rename(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetSrc(), r.GetDst(),
		namespace.RenameOptions{Overwrite: r.GetOverwrite(), NoDescend: r.GetNoDescend()})
}

func applyDelete(e env, tx kv.Txn, r *pb.DeleteRequest) (bool, error) {
	h := r.GetHeader()
	return e.fs.DeleteInode(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), r.GetRecursive(), r.GetInodeId())
}

func applySetPermission(e env, tx kv.Txn, r *pb.SetPermissionRequest) (None, error) {
	h := r.GetHeader()
	return None{}, e.fs.SetPermission(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), perm(r.GetPermission()))
}

func applySetOwner(e env, tx kv.Txn, r *pb.SetOwnerRequest) (None, error) {
	h := r.GetHeader()
	return None{}, e.fs.SetOwner(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), r.GetOwner(), r.GetGroup())
}

func applySetTimes(e env, tx kv.Txn, r *pb.SetTimesRequest) (None, error) {
	h := r.GetHeader()
	return None{}, e.fs.SetTimes(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), r.GetModificationTime(), r.GetAccessTime())
}

func attrResponse(None) *pb.SetAttrResponse { return &pb.SetAttrResponse{} }

func applyFlush(e env, tx kv.Txn, r *pb.FlushRequest) (namespace.Flushed, error) {
	h := r.GetHeader()
	return e.fs.Flush(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), namespace.FlushOptions{
		Inode: r.GetInodeId(), Holder: h.GetClientName(), Blocks: blocksFromProto(r.GetBlocks()),
		TailOffset: r.GetTailOffset(), TailData: r.GetTailData()})
}

func applyAppend(e env, tx kv.Txn, r *pb.AppendRequest) (Appended, error) {
	h := r.GetHeader()
	n, again, err := e.fs.Append(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), h.GetClientName())
	return Appended{Inode: n, Again: again}, err
}

func applyTruncate(e env, tx kv.Txn, r *pb.TruncateRequest) (None, error) {
	h := r.GetHeader()
	return None{}, e.fs.Truncate(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), r.GetLength())
}

func applyConcat(e env, tx kv.Txn, r *pb.ConcatRequest) (None, error) {
	h := r.GetHeader()
	uploads := make([]namespace.Upload, 0, len(r.GetUploads()))
	for _, u := range r.GetUploads() {
		uploads = append(uploads, namespace.Upload{Inode: u.GetInodeId(), Mtime: u.GetMtime(),
			Block: kvschema.Block{ID: u.GetBlock().GetBlockId(), Length: u.GetBlock().GetLength()}})
	}
	return None{}, e.fs.Concat(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetTarget(), r.GetSrcs(), uploads)
}

func applyResync(e env, tx kv.Txn, r *pb.ResyncRequest) (uint64, error) {
	h := r.GetHeader()
	if !e.fs.IsSuperuser(CallerOf(h)) {
		return 0, &namespace.PathError{Op: "resync", Path: r.GetPath(),
			Err: fserr.Errorf(fserr.ErrPermission, "only a superuser may resync a cache-mode namespace")}
	}
	return e.fs.Resync(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath())
}

func applyRecoverLease(e env, tx kv.Txn, r *pb.RecoverLeaseRequest) (bool, error) {
	h := r.GetHeader()
	return e.fs.RecoverLease(tx, e.now, CallerOf(h), h.GetNamespace(), r.GetPath(), blockFromProto(r.GetTailBlock()))
}

func applyCreateNamespace(e env, tx kv.Txn, r *pb.CreateNamespaceRequest) (None, error) {
	return None{}, e.fs.CreateNamespace(tx, e.now, CallerOf(r.GetHeader()), namespaceOf(r.GetNamespace()))
}

// namespaceOf is the record of a namespace to create, as a request
// describes it.
func namespaceOf(info *pb.NamespaceInfo) kvschema.Namespace {
	return kvschema.Namespace{Name: info.GetName(), Mode: uint8(info.GetMode()), StoreURI: info.GetStoreUri(),
		SyncInterval: info.GetSyncInterval()}
}

// deleteModes maps the request's mode to the namespace's. An unset mode is
// what commands logged before the field existed meant: remove at once
// (the service sets NAMESPACE_DELETE_MODE_IF_EMPTY on requests that leave it
// unset, before they are logged).
var deleteModes = map[pb.NamespaceDeleteMode]namespace.NamespaceDelete{
	pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_UNSPECIFIED: namespace.DeleteNow,
	pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_IF_EMPTY:    namespace.DeleteIfEmpty,
	pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_TRASH:       namespace.DeleteToTrash,
	pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_NOW:         namespace.DeleteNow,
}

func applyDeleteNamespace(e env, tx kv.Txn, r *pb.DeleteNamespaceRequest) (*kvschema.Inode, error) {
	mode, ok := deleteModes[r.GetMode()]
	if !ok {
		return nil, &namespace.PathError{Op: "deleteNamespace", Path: r.GetName(),
			Err: fserr.Errorf(fserr.ErrInvalidArgument, "unknown delete mode %d", r.GetMode())}
	}
	return e.fs.DeleteNamespace(tx, e.now, CallerOf(r.GetHeader()), r.GetName(), mode)
}

// deletedNamespace answers a namespace's deletion with what it held.
func deletedNamespace(root *kvschema.Inode) *pb.DeleteNamespaceResponse {
	if root == nil {
		return &pb.DeleteNamespaceResponse{}
	}
	return &pb.DeleteNamespaceResponse{Files: root.SubFiles, Directories: root.SubDirs + 1, Length: root.SubLength}
}

func perm(p uint32) uint16 { return uint16(p & 0o7777) }

// blockFromProto is b, or nil when unset.
func blockFromProto(b *pb.Block) *kvschema.Block {
	if b == nil {
		return nil
	}
	return &kvschema.Block{ID: b.GetBlockId(), Offset: b.GetOffset(), Length: b.GetLength()}
}

func blocksFromProto(bs []*pb.Block) []kvschema.Block {
	out := make([]kvschema.Block, len(bs))
	for i, b := range bs {
		out[i] = kvschema.Block{ID: b.GetBlockId(), Offset: b.GetOffset(), Length: b.GetLength()}
	}
	return out
}
