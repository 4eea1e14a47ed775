package client

import (
	"context"
	"path"
	"time"
	"unicode/utf8"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// FileStatus describes a file or directory.
type FileStatus struct {
	Path              string // absolute, within its namespace
	Name              string
	IsDir             bool
	Length            uint64
	Perm              uint32 // 0o7777 mode bits
	Owner, Group      string
	ModTime, AccTime  time.Time
	Replication       uint32
	BlockSize         uint64
	UnderConstruction bool
	Children          uint64 // entries of a directory
	InodeID           uint64
	// HasACL: the entry has an ACL (ACLStatus), and Perm's group bits are
	// its mask.
	HasACL bool
}

// statusFromProto is st, an entry of the directory parent joins names
// with.
func statusFromProto(parent fspath.Joiner, st *pb.FileStatus) *FileStatus {
	p := parent.Dir()
	if st.Name != "" {
		p = parent.Join(st.Name)
	}
	return &FileStatus{Path: p, Name: st.Name, IsDir: st.Type == pb.FileType_FILE_TYPE_DIRECTORY,
		Length: st.Length, Perm: st.Permission, Owner: st.Owner, Group: st.Group,
		ModTime: time.UnixMilli(st.ModificationTime), AccTime: time.UnixMilli(st.AccessTime),
		Replication: st.Replication, BlockSize: st.BlockSize, UnderConstruction: st.UnderConstruction,
		Children: st.Children, InodeID: st.InodeId, HasACL: st.HasAcl}
}

// Stat returns the status of the file or directory name.
func (c *Client) Stat(ctx context.Context, name string) (*FileStatus, error) {
	ns, p, err := splitPath(name)
	if err != nil {
		return nil, err
	}
	r, err := call(func() (*pb.GetFileStatusResponse, error) {
		return c.meta.GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: c.hdr(ns), Path: p})
	})
	if err != nil {
		return nil, err
	}
	return statusFromProto(fspath.NewJoiner(path.Dir(p)), r.Status), nil
}

// Mkdirs creates path and any missing parents, like HDFS mkdirs; it
// reports false when the directory existed.
func (c *Client) Mkdirs(ctx context.Context, path string, perm uint32) (bool, error) {
	return c.mkdir(ctx, path, perm, true)
}

// Mkdir creates path, whose parent must exist.
func (c *Client) Mkdir(ctx context.Context, path string, perm uint32) (bool, error) {
	return c.mkdir(ctx, path, perm, false)
}

func (c *Client) mkdir(ctx context.Context, path string, perm uint32, parents bool) (bool, error) {
	ns, p, err := splitNewPath(path)
	if err != nil {
		return false, err
	}
	r, err := call(func() (*pb.MkdirsResponse, error) {
		return c.meta.Mkdirs(ctx, &pb.MkdirsRequest{Header: c.hdr(ns), Path: p, Permission: perm, Umask: c.umask, CreateParents: parents})
	})
	return r.GetCreated(), err
}

// Rename moves src to dst with FileSystem.rename semantics: an existing
// directory dst receives src as a child; an existing file dst is an error.
// It returns the path src now has.
func (c *Client) Rename(ctx context.Context, src, dst string) (string, error) {
	return c.rename(ctx, src, dst, false, false)
}

// Rename2 moves src to exactly dst (never into it); overwrite replaces an
// existing file or empty directory there.
func (c *Client) Rename2(ctx context.Context, src, dst string, overwrite bool) error {
	_, err := c.rename(ctx, src, dst, overwrite, true)
	return err
}

func (c *Client) rename(ctx context.Context, src, dst string, overwrite, noDescend bool) (string, error) {
	ns, sp, err := splitPath(src)
	if err != nil {
		return "", err
	}
	dns, dp, err := splitNewPath(dst)
	if err != nil {
		return "", err
	}
	if c.nsName(ns) != c.nsName(dns) {
		return "", fserr.Errorf(fserr.ErrInvalidArgument, "rename %s to %s: source and destination are in different namespaces", src, dst)
	}
	r, err := call(func() (*pb.RenameResponse, error) {
		return c.meta.Rename(ctx, &pb.RenameRequest{Header: c.hdr(ns), Src: sp, Dst: dp, Overwrite: overwrite, NoDescend: noDescend})
	})
	return r.GetFinalPath(), err
}

// Delete removes path (a non-empty directory only if recursive); it reports
// false when nothing was there.
func (c *Client) Delete(ctx context.Context, path string, recursive bool) (bool, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return false, err
	}
	r, err := call(func() (*pb.DeleteResponse, error) {
		return c.meta.Delete(ctx, &pb.DeleteRequest{Header: c.hdr(ns), Path: p, Recursive: recursive})
	})
	return r.GetDeleted(), err
}

// SetPermission sets path's mode bits.
func (c *Client) SetPermission(ctx context.Context, path string, perm uint32) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	_, err = call(func() (*pb.SetAttrResponse, error) {
		return c.meta.SetPermission(ctx, &pb.SetPermissionRequest{Header: c.hdr(ns), Path: p, Permission: perm})
	})
	return err
}

// SetOwner sets path's owner and group; empty leaves one as it is.
func (c *Client) SetOwner(ctx context.Context, path, owner, group string) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	for _, name := range []string{owner, group} {
		if !utf8.ValidString(name) {
			return fserr.Errorf(fserr.ErrInvalidArgument, "setOwner %s: %q is not valid UTF-8", path, name)
		}
	}
	_, err = call(func() (*pb.SetAttrResponse, error) {
		return c.meta.SetOwner(ctx, &pb.SetOwnerRequest{Header: c.hdr(ns), Path: p, Owner: owner, Group: group})
	})
	return err
}

// SetTimes sets path's modification and access times; a zero time leaves
// one as it is.
func (c *Client) SetTimes(ctx context.Context, path string, mtime, atime time.Time) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return -1
		}
		return t.UnixMilli()
	}
	_, err = call(func() (*pb.SetAttrResponse, error) {
		return c.meta.SetTimes(ctx, &pb.SetTimesRequest{Header: c.hdr(ns), Path: p, ModificationTime: ms(mtime), AccessTime: ms(atime)})
	})
	return err
}

// ContentSummary is the aggregate size of a subtree.
type ContentSummary struct {
	Length, FileCount, DirectoryCount, SpaceConsumed uint64
	// LoadedOnly: in a cache-mode namespace the counts are of what the
	// service has loaded from the bucket, which may be less than it holds.
	LoadedOnly bool
	// Quota is a directory's quotas; nil if it has none.
	Quota *Quota
}

// ContentSummary returns path's aggregates, kept exact by the service.
func (c *Client) ContentSummary(ctx context.Context, path string) (*ContentSummary, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	r, err := call(func() (*pb.GetContentSummaryResponse, error) {
		return c.meta.GetContentSummary(ctx, &pb.GetContentSummaryRequest{Header: c.hdr(ns), Path: p})
	})
	if err != nil {
		return nil, err
	}
	sum := &ContentSummary{Length: r.Length, FileCount: r.FileCount, DirectoryCount: r.DirectoryCount,
		SpaceConsumed: r.SpaceConsumed, LoadedOnly: r.LoadedOnly}
	if q := r.GetQuota(); q != nil {
		sum.Quota = &Quota{Names: q.GetNames(), Space: q.GetSpace()}
	}
	return sum, nil
}

// RecoverLease closes a file its writer left open; it reports whether the
// file is closed.
func (c *Client) RecoverLease(ctx context.Context, path string) (bool, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return false, err
	}
	r, err := call(func() (*pb.RecoverLeaseResponse, error) {
		return c.meta.RecoverLease(ctx, &pb.RecoverLeaseRequest{Header: c.hdr(ns), Path: p})
	})
	return r.GetClosed(), err
}

// Truncate cuts closed file path to length bytes, no more than it holds.
func (c *Client) Truncate(ctx context.Context, path string, length uint64) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	_, err = call(func() (*pb.TruncateResponse, error) {
		return c.meta.Truncate(ctx, &pb.TruncateRequest{Header: c.hdr(ns), Path: p, Length: length})
	})
	return err
}

// Concat appends the closed files srcs, in order, to the closed file target
// and removes them, as HDFS's concat: the sources' blocks become the
// target's without a byte moving (docs/semantics.md, "Concat"). All must be
// in one block-mode namespace.
func (c *Client) Concat(ctx context.Context, target string, srcs []string) error {
	ns, t, err := splitPath(target)
	if err != nil {
		return err
	}
	req := &pb.ConcatRequest{Header: c.hdr(ns), Target: t}
	for _, s := range srcs {
		sns, sp, err := splitPath(s)
		if err != nil {
			return err
		}
		if c.nsName(sns) != c.nsName(ns) {
			return fserr.Errorf(fserr.ErrInvalidArgument, "concat %s: source %s is in another namespace", target, s)
		}
		req.Srcs = append(req.Srcs, sp)
	}
	_, err = call(func() (*pb.ConcatResponse, error) { return c.meta.Concat(ctx, req) })
	return err
}
