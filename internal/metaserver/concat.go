package metaserver

import (
	"bytes"
	"context"
	"fmt"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/object"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// A concat moves block records only (internal/namespace's Concat), but a
// small file's content has no block: it is in its inode. Before the
// command is proposed, the leader makes a block of each such content (the
// target's and the sources'), under the target's inode, and the command
// takes those blocks for the files as they were read (ConcatRequest.uploads).
// NB: a concat that then fails leaves these few KiB in the bucket.

// maxConcatSources bounds the sources of one concat: each is resolved in
// the command, and a small one is uploaded first.
const maxConcatSources = 10_000

// admitConcat makes the blocks of the inline contents of a concat's files.
func admitConcat(ctx context.Context, m *Member, req sm.Request) error {
	r := req.(*pb.ConcatRequest)
	switch {
	case len(r.GetUploads()) > 0:
		return fserr.Errorf(fserr.ErrInvalidArgument, "concat %s: the uploads are the service's to set", r.GetTarget())
	case len(r.GetSrcs()) > maxConcatSources:
		return fserr.Errorf(fserr.ErrInvalidArgument, "concat %s: %d sources, more than %d",
			r.GetTarget(), len(r.GetSrcs()), maxConcatSources)
	}
	target, uri, smalls, err := m.smallContents(ctx, r)
	if err != nil || target == 0 || len(smalls) == 0 {
		return err // the command reports what is wrong with the files
	}
	store, err := m.stores.Get(ctx, uri)
	if err != nil {
		return err
	}
	for _, s := range smalls {
		id := blocks.NewID()
		err := object.PutParallel(ctx, store, blocks.ObjectKey(target, id), bytes.NewReader(s.data),
			int64(len(s.data)), object.ParallelOptions{})
		if err != nil {
			return fmt.Errorf("concat %s: make a block of a small file's content: %w", r.GetTarget(), err)
		}
		r.Uploads = append(r.Uploads, &pb.ConcatUpload{InodeId: s.ino, Mtime: s.mtime,
			Block: &pb.Block{BlockId: id, Length: uint64(len(s.data))}})
	}
	return nil
}

// small is an inline file's content as read.
type small struct {
	ino   uint64
	mtime int64
	data  []byte
}

// smallContents reads the target's inode, its namespace's bucket (none in
// cache mode) and the inline contents among the concat's files.
func (m *Member) smallContents(ctx context.Context, r *pb.ConcatRequest) (uint64, string, []small, error) {
	h := r.GetHeader()
	c, ns := sm.CallerOf(h), h.GetNamespace()
	var target uint64
	var uri string
	var smalls []small
	err := m.core.View(ctx, func(rd kv.Reader) error {
		rec, err := sm.NamespaceRecord(rd, ns)
		if err != nil || rec.IsCache() {
			return err
		}
		uri = rec.StoreURI
		if target, _, err = m.core.machine.Writer(rd, c, ns, r.GetTarget()); err != nil {
			target = 0
			return nil
		}
		for _, p := range append([]string{r.GetTarget()}, r.GetSrcs()...) {
			ino, mtime, data, err := m.core.machine.Inline(rd, c, ns, p)
			if err != nil {
				return err
			}
			if ino != 0 {
				smalls = append(smalls, small{ino: ino, mtime: mtime, data: data})
			}
		}
		return nil
	})
	return target, uri, smalls, err
}
