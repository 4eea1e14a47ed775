package cachemode

import (
	"bytes"
	"context"
	"errors"
	"path"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The bucket side of the mutations. Each first makes the paths it touches
// fresh, then tries the mutation on a copy of the state, and does its part
// in the bucket only if the namespace would accept it; the service then
// logs it. Between the two another client may change the bucket: the next
// sync shows what won, as on S3.

// try reports whether the namespace would accept mutation row for req now,
// and what applying it would produce.
func try[Req statemachine.Request, Res any, Resp proto.Message](ctx context.Context, c *call, row statemachine.MutationRow[Req, Res, Resp], req Req) (Res, bool, error) {
	res, err := c.svc.Try(ctx, row.Command(req))
	if err != nil {
		if errors.As(err, new(*namespace.PathError)) {
			return row.Result(res), false, nil // refused: the service will refuse it too
		}
		return row.Result(res), false, err
	}
	return row.Result(res), true, nil
}

// prepareMkdirs puts the new directory's marker, as S3A does.
func prepareMkdirs(ctx context.Context, c *call, r *pb.MkdirsRequest) (proto.Message, error) {
	v, err := c.ensureEntry(ctx, r.GetPath())
	if err != nil || v.Node != nil {
		return r, err
	}
	if _, err := c.ensureEntry(ctx, path.Dir(r.GetPath())); err != nil {
		return nil, err
	}
	if created, ok, err := try(ctx, c, statemachine.Mkdirs, r); err != nil || !ok || !created {
		return r, err
	}
	if err := c.hold(ctx, r.GetPath()); err != nil {
		return nil, err
	}
	_, err = c.store.Put(ctx, namespace.ObjectKey(r.GetPath())+"/", bytes.NewReader(nil), 0)
	return r, err
}

// prepareCreate makes the path fresh, so that overwrite and exclusive
// creates see what the bucket holds. A closed create (an empty or small
// file in one call) puts the object at once and carries its version.
func prepareCreate(ctx context.Context, c *call, req *pb.CreateRequest) (proto.Message, error) {
	r := req
	if _, err := c.ensureEntry(ctx, r.GetPath()); err != nil {
		return nil, err
	}
	if _, err := c.ensureEntry(ctx, path.Dir(r.GetPath())); err != nil {
		return nil, err
	}
	if !r.GetComplete() {
		return req, nil
	}
	r = proto.Clone(r).(*pb.CreateRequest)
	r.ObjectEtag = "-" // what the service sets, for the try
	if _, ok, err := try(ctx, c, statemachine.Create, r); err != nil || !ok {
		return req, err
	}
	if err := c.hold(ctx, r.GetPath()); err != nil {
		return nil, err
	}
	data := r.GetInlineData()
	info, err := c.store.Put(ctx, namespace.ObjectKey(r.GetPath()), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	r.ObjectEtag = info.ETag
	return r, nil
}

// prepareComplete finds the version of the object the writer's worker
// wrote, or puts a small file's content (which the client sends with
// Complete) as the object.
func prepareComplete(ctx context.Context, c *call, req *pb.CompleteRequest) (proto.Message, error) {
	r := proto.CloneOf(req)
	key := namespace.ObjectKey(r.GetPath())
	small := len(r.GetBlocks()) == 0 && (r.GetInline() || r.GetLength() == 0)
	data := r.GetInlineData()
	r.Blocks, r.Inline, r.InlineData, r.ObjectEtag = nil, false, nil, "-"
	if _, ok, err := try(ctx, c, statemachine.Complete, r); err != nil || !ok {
		return r, err
	}
	if err := c.hold(ctx, r.GetPath()); err != nil {
		return nil, err
	}
	var info object.Info
	var err error
	if small {
		info, err = c.store.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
	} else if info, err = c.store.Head(ctx, key); err == nil && uint64(info.Size) != r.GetLength() {
		err = fserr.Errorf(fserr.ErrInvalidArgument, "complete %s: the object in the bucket is %d bytes, the writer wrote %d",
			r.GetPath(), info.Size, r.GetLength())
	}
	if err != nil {
		return nil, err
	}
	r.ObjectEtag = info.ETag
	return r, nil
}

// prepareDelete deletes the object, or every object below the directory
// and its marker. A file being written here has no object yet: nothing is
// deleted in the bucket (an object it was to replace stays, as on S3).
func prepareDelete(ctx context.Context, c *call, r *pb.DeleteRequest) (proto.Message, error) {
	v, err := c.ensureEntry(ctx, r.GetPath())
	if err != nil || v.Node == nil || v.Node.Holder != "" {
		return r, err
	}
	if v.Node.IsDir() && !r.GetRecursive() {
		// Not-empty is decided on the directory's children as listed.
		if err := c.ensureListed(ctx, r.GetPath(), v); err != nil {
			return nil, err
		}
	}
	if deleted, ok, err := try(ctx, c, statemachine.Delete, r); err != nil || !ok || !deleted {
		return r, err
	}
	if err := c.hold(ctx, r.GetPath()); err != nil {
		return nil, err
	}
	if err := c.keepParent(ctx, r.GetPath()); err != nil {
		return nil, err
	}
	key := namespace.ObjectKey(r.GetPath())
	if v.Node.IsDir() {
		p, done := c.track(r.GetPath(), objectsIn(v.Node))
		err = c.deleteTree(ctx, p, key+"/")
		done()
	} else {
		err = c.store.Delete(ctx, key)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// keepParent puts the marker of path's directory, so that it stays a
// directory in the bucket when path was its last object (S3A does the
// same, after the delete). It is put before anything is deleted, so that
// the directory never vanishes meanwhile (see hold.go).
func (c *call) keepParent(ctx context.Context, p string) error {
	dir := path.Dir(p)
	if dir == "/" {
		return nil
	}
	_, err := c.store.Put(ctx, namespace.ObjectKey(dir)+"/", bytes.NewReader(nil), 0)
	return err
}

// prepareRename copies then deletes, object by object, as S3A does: not
// atomic (a reader may see both copies, or a directory half moved, and a
// failure midway leaves it so: rename again, or delete, to finish). A
// file being written cannot be renamed: its object goes to the key it was
// created at.
func prepareRename(ctx context.Context, c *call, r *pb.RenameRequest) (proto.Message, error) {
	src, err := c.ensureEntry(ctx, r.GetSrc())
	if err != nil || src.Node == nil {
		return r, err
	}
	if src.Node.Holder != "" {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "rename %s: the file is being written; in a cache-mode namespace it can be renamed once closed", r.GetSrc())
	}
	for _, p := range []string{r.GetDst(), path.Join(r.GetDst(), path.Base(r.GetSrc())), path.Dir(r.GetDst())} {
		if _, err := c.ensureEntry(ctx, p); err != nil && !errors.Is(err, namespace.ErrInvalidPath) {
			return nil, err
		}
	}
	final, ok, err := try(ctx, c, statemachine.Rename, r)
	if err != nil || !ok || final == "" || final == r.GetSrc() {
		return r, err
	}
	if err := c.hold(ctx, r.GetSrc(), final); err != nil {
		return nil, err
	}
	if err := c.keepParent(ctx, r.GetSrc()); err != nil {
		return nil, err
	}
	from, to := namespace.ObjectKey(r.GetSrc()), namespace.ObjectKey(final)
	if src.Node.IsDir() {
		p, done := c.track(r.GetSrc(), 2*objectsIn(src.Node))
		err = c.moveTree(ctx, p, from+"/", to+"/")
		done()
	} else {
		err = c.moveObject(ctx, from, src.State.ETag, to)
	}
	if err != nil {
		return nil, err
	}
	// The copies' versions may differ from the sources' (a multipart
	// object's ETag does): what moves with the rename is to be checked.
	_, err = c.svc.Propose(ctx, statemachine.MarkStale.Command(&pb.MarkStaleCommand{Namespace: c.ns.Name,
		Path: r.GetSrc()}))
	return r, err
}

// moveObject copies the object at from, of version etag, to to, then
// deletes from.
func (c *call) moveObject(ctx context.Context, from, etag, to string) error {
	if _, err := c.store.Copy(ctx, from, etag, to); err != nil {
		if errors.Is(err, object.ErrChanged) {
			return fserr.Errorf(fserr.ErrInvalidArgument, "rename %s: the object changed in the bucket meanwhile; try again", from)
		}
		return err
	}
	return c.store.Delete(ctx, from)
}

// objectsIn is about how many objects the bucket holds for directory n,
// as the namespace knows it: its files and a marker per directory.
func objectsIn(n *kvschema.Inode) uint64 { return n.SubFiles + n.SubDirs + 1 }
