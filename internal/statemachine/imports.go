package statemachine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The imports of whole namespaces (namespace.BeginImport and the rest):
// the ids reserved, the tables added with the commit, which the service
// ingests with the commit's entry (Applied.Ingest).
var (
	BeginImport = mutation(Op{Name: "BeginImport"},
		func(r *pb.BeginImportRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_BeginImport{BeginImport: r}}
		},
		(*pb.Command).GetBeginImport,
		func(e env, tx kv.Txn, r *pb.BeginImportRequest) (kvschema.Import, error) {
			return e.fs.BeginImport(tx, e.now, CallerOf(r.GetHeader()), r.GetImportId(), r.GetNamespace(), r.GetCount())
		},
		func(im kvschema.Import) *pb.BeginImportResponse {
			return &pb.BeginImportResponse{Base: im.Base, Count: im.Count, Done: im.Done != 0}
		}, keptImport)
	CommitImport = mutation(Op{Name: "CommitImport", Namespaces: true, Ingests: true, Imports: true},
		func(r *pb.CommitImportRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_CommitImport{CommitImport: r}}
		},
		(*pb.Command).GetCommitImport, applyCommitImport,
		func(*Ingest) *pb.CommitImportResponse { return &pb.CommitImportResponse{} }, keptNothing[*Ingest]())
	AbortImport = mutation(Op{Name: "AbortImport", Imports: true},
		func(r *pb.AbortImportRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_AbortImport{AbortImport: r}}
		},
		(*pb.Command).GetAbortImport,
		func(e env, tx kv.Txn, r *pb.AbortImportRequest) (None, error) {
			return None{}, e.fs.AbortImport(tx, CallerOf(r.GetHeader()), r.GetImportId())
		},
		func(None) *pb.AbortImportResponse { return &pb.AbortImportResponse{} }, keptNothing[None]())
)

// Ingest is what a committed import adds besides its command's writes:
// its tables, by name, which each member holds (the service staged them
// before it proposed the commit).
type Ingest struct {
	ImportID string
	Tables   []string
}

func applyCommitImport(e env, tx kv.Txn, r *pb.CommitImportRequest) (*Ingest, error) {
	info := namespaceOf(r.GetNamespace())
	if err := e.fs.CommitImport(tx, e.now, CallerOf(r.GetHeader()), r.GetImportId(), info, r.GetRoot()); err != nil {
		return nil, err
	}
	in := &Ingest{ImportID: r.GetImportId()}
	for _, t := range r.GetTables() {
		in.Tables = append(in.Tables, t.GetName())
	}
	return in, nil
}

// keptImport keeps an import's record as text ("base count done"), so
// that a retry of BeginImport learns the ids it reserved.
var keptImport = kept[kvschema.Import]{
	keep: func(im kvschema.Import) kvschema.Answer {
		return kvschema.Answer{Kind: kvschema.AnswerText, Text: fmt.Sprintf("%d %d %d", im.Base, im.Count, im.Done)}
	},
	restore: func(a kvschema.Answer) kvschema.Import {
		f := strings.Fields(a.Text)
		var im kvschema.Import
		if len(f) == 3 {
			im.Base, _ = strconv.ParseUint(f[0], 10, 64)
			im.Count, _ = strconv.ParseUint(f[1], 10, 64)
			im.Done, _ = strconv.ParseInt(f[2], 10, 64)
		}
		return im
	},
}

// ImportRecord returns the record of the import called id from the
// applied state, and whether there is one.
func ImportRecord(r kv.Reader, id string) (kvschema.Import, bool, error) {
	return namespace.ImportRecord(r, id)
}

// ValidImportID reports whether id may name an import.
func ValidImportID(id string) bool { return namespace.ValidImportID(id) }
