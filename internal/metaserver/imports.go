package metaserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/bulkload"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/privdir"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// importer holds, on each member, the tables of the imports under way
// (DATA/imports/ID/): on the leader as the importer uploads them, on the
// others as the leader stages them before it proposes the commit, whose
// apply ingests them (replica.ingest). Every table is checked where it
// lands (bulkload.Check), whoever sent it. A stage.json written last says
// which tables an import's directory holds whole.
type importer struct {
	dir   string // DATA/imports
	core  *replica
	log   *slog.Logger
	mu    sync.Mutex // one upload or stage at a time writes a directory
	stage func(ctx context.Context, to uint64, name, dir string, files []string) error
}

// staged is what stage.json holds: the import's ids and its tables.
type staged struct {
	ID          string
	Base, Count uint64
	Tables      []stagedTable
}

type stagedTable struct {
	Name   string
	Size   uint64
	SHA256 string
}

const stageFile = "stage.json"

// maxTable bounds one table's size.
const maxTable = 1 << 40

// validTableName reports whether name may name a table: 1 to 64 of
// [0-9a-z.-], ending in .sst.
func validTableName(name string) bool {
	if len(name) == 0 || len(name) > 64 || !strings.HasSuffix(name, ".sst") || strings.Contains(name, "..") {
		return false
	}
	for _, ch := range name {
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.') {
			return false
		}
	}
	return true
}

// record returns the applied record of import id, which must be under way.
func (im *importer) record(id string) (kvschema.Import, error) {
	if !sm.ValidImportID(id) {
		return kvschema.Import{}, fserr.Errorf(fserr.ErrInvalidArgument, "import id %q", id)
	}
	var rec kvschema.Import
	var found bool
	err := im.core.Applied(func(r kv.Reader) (err error) {
		rec, found, err = sm.ImportRecord(r, id)
		return err
	})
	switch {
	case err != nil:
		return rec, err
	case !found:
		return rec, fserr.Errorf(fserr.ErrNotFound, "no import %s: begin it first", id)
	case rec.Done != 0:
		return rec, fserr.Errorf(fserr.ErrExists, "import %s committed already", id)
	}
	return rec, nil
}

// upload receives one table from the importer, checks it and keeps it.
func (im *importer) upload(ctx context.Context, m *Member, stream grpc.ClientStreamingServer[pb.ImportChunk, pb.UploadImportResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	if err := m.tokens.RequireSuperuser(ctx, first.GetHeader(), "import a namespace"); err != nil {
		return err
	}
	if !im.core.IsLeader() {
		return im.core.NotLeader()
	}
	t := first.GetTable()
	if !validTableName(t.GetName()) || t.GetSize() > maxTable || len(t.GetSha256()) != 64 {
		return fserr.Errorf(fserr.ErrInvalidArgument, "table %q of %d bytes, SHA-256 %q: want a name of 1 to 64 of [0-9a-z.-] ending in .sst, at most %d bytes",
			t.GetName(), t.GetSize(), t.GetSha256(), uint64(maxTable))
	}
	rec, err := im.record(first.GetImportId())
	if err != nil {
		return err
	}
	dir := filepath.Join(im.dir, first.GetImportId())
	if err := privdir.MkdirAll(dir); err != nil {
		return err
	}
	path := filepath.Join(dir, t.GetName())
	if err := receiveTable(stream, first, path+".part", t); err != nil {
		os.Remove(path + ".part")
		return err
	}
	if _, err := bulkload.Check(path+".part", rec.Base, rec.Count); err != nil {
		os.Remove(path + ".part")
		return fserr.Errorf(fserr.ErrInvalidArgument, "table %s: %v", t.GetName(), err)
	}
	sum, _ := json.Marshal(stagedTable{Name: t.GetName(), Size: t.GetSize(), SHA256: t.GetSha256()})
	if err := writeSynced(path+".json", sum); err != nil {
		return err
	}
	if err := os.Rename(path+".part", path); err != nil {
		return err
	}
	return stream.SendAndClose(&pb.UploadImportResponse{})
}

// receiveTable writes the chunks of one table to path, and checks its
// size and SHA-256 against what its first chunk said.
func receiveTable(stream grpc.ClientStreamingServer[pb.ImportChunk, pb.UploadImportResponse], c *pb.ImportChunk, path string, t *pb.ImportTable) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, privdir.FileMode)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	var n uint64
	for {
		n += uint64(len(c.GetData()))
		if n > t.GetSize() {
			return fserr.Errorf(fserr.ErrInvalidArgument, "table %s: more than the %d bytes it said", t.GetName(), t.GetSize())
		}
		if _, err := w.Write(c.GetData()); err != nil {
			return err
		}
		if c.GetEof() {
			break
		}
		if c, err = stream.Recv(); err != nil {
			return err
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != t.GetSize() || got != t.GetSha256() {
		return fserr.Errorf(fserr.ErrInvalidArgument, "table %s: %d bytes hashing to %s, where it said %d and %s",
			t.GetName(), n, got, t.GetSize(), t.GetSha256())
	}
	return f.Sync()
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, privdir.FileMode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// tables lists the tables this member holds of import id, checked.
func (im *importer) tables(id string) ([]stagedTable, error) {
	dir := filepath.Join(im.dir, id)
	matches, err := filepath.Glob(filepath.Join(dir, "*.sst.json"))
	if err != nil {
		return nil, err
	}
	var out []stagedTable
	for _, p := range matches {
		var t stagedTable
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, &t)
		}
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(dir, t.Name)); err == nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// status answers GetImport.
func (im *importer) status(ctx context.Context, m *Member, r *pb.GetImportRequest) (*pb.GetImportResponse, error) {
	if err := m.tokens.RequireSuperuser(ctx, r.GetHeader(), "import a namespace"); err != nil {
		return nil, err
	}
	if !im.core.IsLeader() {
		return nil, im.core.NotLeader()
	}
	if !sm.ValidImportID(r.GetImportId()) {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "import id %q", r.GetImportId())
	}
	var rec kvschema.Import
	var found bool
	if err := im.core.View(ctx, func(rd kv.Reader) (err error) {
		rec, found, err = sm.ImportRecord(rd, r.GetImportId())
		return err
	}); err != nil {
		return nil, err
	}
	if !found {
		return nil, fserr.Errorf(fserr.ErrNotFound, "no import %s", r.GetImportId())
	}
	resp := &pb.GetImportResponse{Namespace: rec.Namespace, Base: rec.Base, Count: rec.Count, Done: rec.Done != 0}
	list, err := im.tables(r.GetImportId())
	for _, t := range list {
		resp.Tables = append(resp.Tables, &pb.ImportTable{Name: t.Name, Size: t.Size, Sha256: t.SHA256})
	}
	return resp, err
}

// stageAll makes sure every member holds the tables of a commit, checked:
// this member (the leader) has them from the uploads; the others are sent
// them. It returns once all of them confirmed, or the first refusal.
func (im *importer) stageAll(ctx context.Context, r *pb.CommitImportRequest) error {
	id := r.GetImportId()
	rec, err := im.record(id)
	if err != nil {
		return err
	}
	have, err := im.tables(id)
	if err != nil {
		return err
	}
	held := map[string]stagedTable{}
	for _, t := range have {
		held[t.Name] = t
	}
	st := staged{ID: id, Base: rec.Base, Count: rec.Count}
	files := []string{stageFile}
	for _, t := range r.GetTables() {
		h, ok := held[t.GetName()]
		if !ok || h.Size != t.GetSize() || h.SHA256 != t.GetSha256() {
			return fserr.Errorf(fserr.ErrInvalidArgument, "table %s: the leader does not hold it as it is said to be (upload it)", t.GetName())
		}
		st.Tables = append(st.Tables, h)
		files = append(files, h.Name)
	}
	b, _ := json.Marshal(st)
	dir := filepath.Join(im.dir, id)
	if err := writeSynced(filepath.Join(dir, stageFile), b); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for mid := range im.core.members.All() {
		if mid == im.core.cfg.MemberID {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := im.stage(ctx, mid, id, dir, files); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("member %d: %w", mid, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return fserr.Errorf(fserr.ErrUnavailable, "import %s: every member must hold its tables before the commit, and %v", id, errors.Join(errs...))
	}
	return nil
}

// received is the transport's Staged hook: the tables the leader sent this
// member, in dir, checked against its stage.json, then kept.
func (im *importer) received(id, dir string) error {
	var st staged
	b, err := os.ReadFile(filepath.Join(dir, stageFile))
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil || st.ID != id || !sm.ValidImportID(id) {
		return fmt.Errorf("no stage.json of import %s (%v)", id, err)
	}
	for _, t := range st.Tables {
		if !validTableName(t.Name) {
			return fmt.Errorf("table name %q", t.Name)
		}
		p := filepath.Join(dir, t.Name)
		sum, size, err := bulkload.FileSHA256(p)
		if err != nil || uint64(size) != t.Size || sum != t.SHA256 {
			return fmt.Errorf("table %s: %d bytes hashing to %s, where stage.json has %d and %s (%v)", t.Name, size, sum, t.Size, t.SHA256, err)
		}
		if _, err := bulkload.Check(p, st.Base, st.Count); err != nil {
			return err
		}
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	dest := filepath.Join(im.dir, id)
	if err := privdir.MkdirAll(dest); err != nil {
		return err
	}
	for _, t := range st.Tables {
		if err := os.Rename(filepath.Join(dir, t.Name), filepath.Join(dest, t.Name)); err != nil {
			return err
		}
	}
	return writeSynced(filepath.Join(dest, stageFile), b)
}

// ingestPaths returns the paths of the tables a commit ingests, checked
// against the stage.json beside them: a member without them cannot apply
// the commit, and stops (it must be removed and added again).
func (im *importer) ingestPaths(in *sm.Ingest) ([]string, error) {
	dir := filepath.Join(im.dir, in.ImportID)
	var st staged
	b, err := os.ReadFile(filepath.Join(dir, stageFile))
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		return nil, fmt.Errorf("metaserver: import %s: this member holds no staged tables (%v): it cannot apply the commit; remove it and add it again", in.ImportID, err)
	}
	have := map[string]bool{}
	for _, t := range st.Tables {
		have[t.Name] = true
	}
	paths := make([]string, len(in.Tables))
	for i, name := range in.Tables {
		if !have[name] {
			return nil, fmt.Errorf("metaserver: import %s: table %s was not staged on this member", in.ImportID, name)
		}
		paths[i] = filepath.Join(dir, name)
	}
	return paths, nil
}

// start drops what stages a restart interrupted left, and the tables of
// imports that ended meanwhile.
func (im *importer) start() {
	leftovers, _ := filepath.Glob(filepath.Join(im.dir, ".in-*"))
	for _, p := range leftovers {
		os.RemoveAll(p)
	}
	im.cleanup()
}

// cleanup removes what this member holds of imports that ended (committed
// or aborted) or that the state does not know, and what a stage that a
// restart interrupted left.
func (im *importer) cleanup() {
	im.mu.Lock()
	defer im.mu.Unlock()
	entries, err := os.ReadDir(im.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".in-") {
			continue // a stage under way removes its own
		}
		var live bool
		_ = im.core.Applied(func(r kv.Reader) error {
			rec, found, err := sm.ImportRecord(r, name)
			live = err == nil && found && rec.Done == 0
			return nil
		})
		if !live {
			im.log.Info("removing the staged tables of an import that ended", "import", name)
			os.RemoveAll(filepath.Join(im.dir, name))
		}
	}
}

// ingest commits tx, whose entries end with a committed import, by
// ingesting the import's tables with its writes, in one step. The
// volatile writes held in memory (pending), which tx is over, are
// committed first, as keep commits them with any durable entry: they
// record their own applied index, so the store holds a state of the log
// in between.
func (r *replica) ingest(in *sm.Ingest, tx *kv.Overlay) error {
	paths, err := r.imports.ingestPaths(in)
	if err != nil {
		return err
	}
	if pending := r.pending.Load(); pending != nil {
		if err := r.store.Commit(pending, false); err != nil {
			return err
		}
		r.pending.Store(nil)
	}
	if err := r.store.Ingest(paths, tx); err != nil {
		return fmt.Errorf("metaserver: import %s: ingest: %w", in.ImportID, err)
	}
	r.cfg.Log.Info("import committed: its tables are in", "import", in.ImportID, "tables", len(paths))
	return nil
}
