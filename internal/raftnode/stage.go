package raftnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	spb "github.com/stratafs/strata/proto/strata/v1"
)

// Staging: files one member hands the others before it proposes an entry
// whose apply needs them on every member (an import's tables), so that the
// log carries their names, not their bytes. The files travel as a
// snapshot's do; the receiver's Staged hook checks them and keeps them
// before the sender hears they arrived.

// StageFiles sends the files of dir named in files to member to, into its
// staging area name, and returns once the member has checked them (its
// Staged hook) or refused them.
func (t *Transport) StageFiles(ctx context.Context, to uint64, name, dir string, files []string) error {
	p := t.peer(to)
	if p == nil {
		return fmt.Errorf("raftnode: stage %s: member %d has no known address", name, to)
	}
	stream, err := p.client.Stage(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&spb.SnapshotChunk{ClusterId: t.cfg.ClusterID, From: t.cfg.ID,
		FromAddress: t.cfg.Address, Stage: name}); err != nil {
		return sendErr(stream, err)
	}
	buf := make([]byte, snapshotChunk)
	for _, f := range files {
		if err := sendFile(stream, filepath.Join(dir, f), f, buf); err != nil {
			return sendErr(stream, err)
		}
	}
	_, err = stream.CloseAndRecv()
	return err
}

// Stage implements RaftService: it receives a member's files into a
// directory of its own under the staging directory and hands them to the
// Staged hook, which keeps them or says why not.
func (t *Transport) Stage(stream grpc.ClientStreamingServer[spb.SnapshotChunk, spb.StepResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	if err := t.admit(first.ClusterId, first.From, first.FromAddress); err != nil {
		return err
	}
	if t.cfg.StageDir == "" || t.cfg.Staged == nil {
		return status.Error(codes.Unimplemented, "this member stages no files")
	}
	name := first.GetStage()
	if !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		return status.Errorf(codes.InvalidArgument, "staging area %q", name)
	}
	if err := os.MkdirAll(t.cfg.StageDir, 0o700); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(t.cfg.StageDir, ".in-"+name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := receiveFiles(stream, dir); err != nil {
		return err
	}
	if err := t.cfg.Staged(name, dir); err != nil {
		return status.Errorf(codes.FailedPrecondition, "member %d refused the files of %s: %v", t.cfg.ID, name, err)
	}
	return stream.SendAndClose(&spb.StepResponse{})
}
