package raftnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/privdir"
	spb "github.com/stratafs/strata/proto/strata/v1"
)

// snapshotChunk is the size of the file pieces of a streamed snapshot.
const snapshotChunk = 1 << 20

// sendSnapshot streams a checkpoint of the state to p with the MsgSnap m,
// and reports the outcome to raft, which sends nothing else to p meanwhile.
func (t *Transport) sendSnapshot(p *peer, m *pb.Message) {
	start := time.Now()
	err := t.streamSnapshot(p, m)
	if t.cfg.SnapshotSent != nil {
		t.cfg.SnapshotSent(p.id, time.Since(start), err)
	}
	if n := t.node.Load(); n != nil {
		n.ReportSnapshot(p.id, err == nil)
	}
	if err != nil {
		t.cfg.Log.Warn("raft transport: snapshot not delivered", "member", p.id, "err", err)
		return
	}
	t.cfg.Log.Info("raft transport: snapshot delivered", "member", p.id,
		"index", m.GetSnapshot().GetMetadata().GetIndex(), "took", time.Since(start).Round(time.Millisecond))
}

func (t *Transport) streamSnapshot(p *peer, m *pb.Message) error {
	dir, err := os.MkdirTemp(t.cfg.SnapshotDir, "out-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cp := filepath.Join(dir, "state")
	if err := t.cfg.Checkpoint(cp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	msg, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	stream, err := p.client.InstallSnapshot(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&spb.SnapshotChunk{ClusterId: t.cfg.ClusterID, From: t.cfg.ID,
		FromAddress: t.cfg.Address, Message: msg}); err != nil {
		return sendErr(stream, err)
	}
	buf := make([]byte, snapshotChunk)
	err = filepath.WalkDir(cp, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(cp, path)
		if err != nil {
			return err
		}
		return sendFile(stream, path, filepath.ToSlash(rel), buf)
	})
	if err != nil {
		return sendErr(stream, err)
	}
	_, err = stream.CloseAndRecv()
	return err
}

func sendFile(stream grpc.ClientStreamingClient[spb.SnapshotChunk, spb.StepResponse], path, rel string, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		n, err := io.ReadFull(f, buf)
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		if serr := stream.Send(&spb.SnapshotChunk{File: rel, Data: buf[:n], Eof: eof}); serr != nil {
			return serr
		}
		if eof {
			return nil
		}
	}
}

// sendErr prefers the receiver's reason for a broken stream.
func sendErr(stream grpc.ClientStreamingClient[spb.SnapshotChunk, spb.StepResponse], err error) error {
	if errors.Is(err, io.EOF) {
		if _, rerr := stream.CloseAndRecv(); rerr != nil {
			return rerr
		}
	}
	return err
}

// InstallSnapshot implements RaftService: it receives a checkpoint into a
// directory of its own and steps the snapshot message, with the directory
// in the snapshot's data, into the node, whose state machine restores it.
func (t *Transport) InstallSnapshot(stream grpc.ClientStreamingServer[spb.SnapshotChunk, spb.StepResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	if err := t.admit(first.ClusterId, first.From, first.FromAddress); err != nil {
		return err
	}
	n := t.node.Load()
	if n == nil {
		return status.Error(codes.Unavailable, "member is starting")
	}
	m := &pb.Message{}
	if err := proto.Unmarshal(first.Message, m); err != nil || m.GetType() != pb.MessageType_MsgSnap {
		return status.Errorf(codes.InvalidArgument, "first chunk is not a snapshot message (%v)", err)
	}
	dir, err := os.MkdirTemp(t.cfg.SnapshotDir, receivedName(m.GetSnapshot().GetMetadata().GetIndex()))
	if err != nil {
		return err
	}
	if err := receiveFiles(stream, dir); err != nil {
		os.RemoveAll(dir)
		return err
	}
	m.Snapshot.Data = []byte(dir)
	if err := n.Step(stream.Context(), m); err != nil {
		os.RemoveAll(dir)
		return status.Errorf(codes.Unavailable, "step snapshot: %v", err)
	}
	return stream.SendAndClose(&spb.StepResponse{})
}

// receivedPrefix begins the names of the directories snapshots are
// received into; the snapshot's index follows (receivedName), so that a
// member that restored a snapshot drops the directories of older ones and
// keeps those of newer ones, which raft may not have handed back yet.
const receivedPrefix = "in-"

// receivedName is the start of the name of a directory that receives the
// snapshot at index; what makes it unique follows.
func receivedName(index uint64) string { return fmt.Sprintf("%s%020d-", receivedPrefix, index) }

// receivedIndex returns the index of the snapshot received into the
// directory of that name, false if it is none.
func receivedIndex(name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(name, receivedPrefix)
	digits, _, dash := strings.Cut(rest, "-")
	index, err := strconv.ParseUint(digits, 10, 64)
	return index, ok && dash && err == nil
}

func receiveFiles(stream grpc.ClientStreamingServer[spb.SnapshotChunk, spb.StepResponse], dir string) error {
	var f *os.File
	var name string
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if f != nil {
				return status.Errorf(codes.DataLoss, "snapshot ended inside %s", name)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if f == nil || c.File != name {
			if f != nil {
				return status.Errorf(codes.DataLoss, "snapshot file %s ended without its last piece", name)
			}
			if !filepath.IsLocal(c.File) || strings.Contains(c.File, "\\") {
				return status.Errorf(codes.InvalidArgument, "snapshot file name %q", c.File)
			}
			name = c.File
			path := filepath.Join(dir, filepath.FromSlash(name))
			// The state's files: they hold the cluster's secrets.
			if err := os.MkdirAll(filepath.Dir(path), privdir.DirMode); err != nil {
				return err
			}
			if f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, privdir.FileMode); err != nil {
				return err
			}
		}
		if _, err := f.Write(c.Data); err != nil {
			return err
		}
		if c.Eof {
			err := errors.Join(f.Sync(), f.Close())
			f = nil
			if err != nil {
				return err
			}
		}
	}
}

// removeReceived drops the directories of the snapshots received beside
// the one just restored, at index, that are no newer than it: raft ignores
// a snapshot older than what it has. NB: a newer one may have been stepped
// into raft already, to be restored next; removing it too stopped the
// member (its restore found no files).
func removeReceived(restored string, index uint64) {
	parent := filepath.Dir(restored)
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		path := filepath.Join(parent, e.Name())
		if i, ok := receivedIndex(e.Name()); ok && i <= index && path != restored {
			os.RemoveAll(path)
		}
	}
}
