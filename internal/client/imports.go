package client

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The import of a namespace whole (internal/nsimport drives it; every
// call is a superuser's).

// BeginImport reserves count inode ids for import id into namespace ns.
// Beginning it again answers as the first time did.
func (c *Client) BeginImport(ctx context.Context, id, ns string, count uint64) (*pb.BeginImportResponse, error) {
	return call(func() (*pb.BeginImportResponse, error) {
		return c.meta.BeginImport(ctx, &pb.BeginImportRequest{Header: c.header, ImportId: id, Namespace: ns, Count: count})
	})
}

// GetImport says what the leader holds of import id.
func (c *Client) GetImport(ctx context.Context, id string) (*pb.GetImportResponse, error) {
	return call(func() (*pb.GetImportResponse, error) {
		return c.meta.GetImport(ctx, &pb.GetImportRequest{Header: c.header, ImportId: id})
	})
}

// uploadChunk is the size of the pieces a table goes to the leader in.
const uploadChunk = 1 << 20

// UploadImport sends the table at path, described by t, to the leader,
// which checks it and keeps it for import id. sent, if set, is told how
// many bytes went so far, after each piece.
func (c *Client) UploadImport(ctx context.Context, id, path string, t *pb.ImportTable, sent func(int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.meta.UploadImport(ctx)
	if err != nil {
		return rpcerr.FromStatus(err)
	}
	buf := make([]byte, uploadChunk)
	first := &pb.ImportChunk{Header: c.header, ImportId: id, Table: t}
	var done int64
	for {
		n, rerr := io.ReadFull(f, buf)
		eof := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !eof {
			return rerr
		}
		chunk := &pb.ImportChunk{}
		if first != nil {
			chunk, first = first, nil
		}
		chunk.Data, chunk.Eof = buf[:n], eof
		if err := stream.Send(chunk); err != nil {
			if errors.Is(err, io.EOF) {
				_, err = stream.CloseAndRecv() // the service's reason
			}
			return rpcerr.FromStatus(err)
		}
		done += int64(n)
		if sent != nil {
			sent(done)
		}
		if eof {
			break
		}
	}
	_, err = stream.CloseAndRecv()
	return rpcerr.FromStatus(err)
}

// CommitImport has every member take import id's tables and makes them
// namespace info's content, rooted at root: in one step, into an empty
// namespace (created with info if it does not exist).
func (c *Client) CommitImport(ctx context.Context, id string, info *pb.NamespaceInfo, root uint64, tables []*pb.ImportTable) error {
	_, err := call(func() (*pb.CommitImportResponse, error) {
		return c.meta.CommitImport(ctx, &pb.CommitImportRequest{Header: c.header, ImportId: id, Namespace: info,
			Root: root, Tables: tables})
	})
	return err
}

// AbortImport forgets import id, which did not commit, and its tables.
func (c *Client) AbortImport(ctx context.Context, id string) error {
	_, err := call(func() (*pb.AbortImportResponse, error) {
		return c.meta.AbortImport(ctx, &pb.AbortImportRequest{Header: c.header, ImportId: id})
	})
	return err
}
