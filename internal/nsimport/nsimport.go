// Package nsimport is the importer's side of a namespace import (strata
// admin import, strata bench scale): it begins the import with the
// service, builds the tree's tables from an image (internal/bulkload),
// uploads each to the leader as it is built, and commits. Its work
// directory makes it resumable: run again after a crash or a kill, with
// the same image, it goes on with the same import, the tables it built
// and those the leader holds. It is not the service's side
// (internal/metaserver's importer) and does no retries of its own beyond
// what the client does.
package nsimport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/bulkload"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fsimage"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Options say what to import where.
type Options struct {
	// Namespace is the namespace the tree becomes: created with these
	// settings if it does not exist (then Mode and StoreUri are needed);
	// if it exists, it must be empty.
	Namespace *pb.NamespaceInfo
	// WorkDir holds the tables and what an import run again needs.
	WorkDir string
	// Key names the image (its path, size and time): a work directory of
	// another image is refused.
	Key string
	// MetadataOnly: the files' data stays behind (block mode); their
	// paths are listed in WorkDir/unreachable.txt.
	MetadataOnly bool
	// TableBytes sizes the tables (bulkload.Options).
	TableBytes uint64
	// Replication is the HDFS cluster's dfs.replication, which the space
	// quotas are divided by (bulkload.Options); 0 for HDFS's default.
	Replication uint32
	// Progress, if set, hears how each phase goes.
	Progress func(Progress)
}

// Progress is how far an import is: a phase of the build (bulkload's), or
// "upload" (Done and Total in bytes).
type Progress = bulkload.Progress

// Result is what an import did.
type Result struct {
	bulkload.Result
	ID   string
	Base uint64
	// Resumed tells that the work directory held an import under way;
	// Committed that the service had committed it already.
	Resumed, Committed bool
	Elapsed            time.Duration
}

// state is what the work directory keeps of the import: import.json.
type state struct {
	ID, Namespace, Key string
}

// ErrOtherImport is a work directory that holds another import.
var ErrOtherImport = errors.New("nsimport: the work directory holds another import")

// Run imports src with c, whose token must be a superuser's.
func Run(ctx context.Context, c *client.Client, src fsimage.Source, o Options) (*Result, error) {
	start := time.Now()
	if err := os.MkdirAll(o.WorkDir, 0o700); err != nil {
		return nil, err
	}
	st, resumed, err := loadState(o)
	if err != nil {
		return nil, err
	}
	begun, err := c.BeginImport(ctx, st.ID, st.Namespace, bulkload.Count(src))
	if err != nil {
		return nil, fmt.Errorf("begin import into %s: %w", st.Namespace, err)
	}
	res := &Result{ID: st.ID, Base: begun.GetBase(), Resumed: resumed}
	if begun.GetDone() {
		res.Committed, res.Elapsed = true, time.Since(start)
		return res, finished(o.WorkDir, nil)
	}
	up := newUploader(ctx, c, st.ID, o)
	built, err := bulkload.Build(src, bulkload.Options{Dir: filepath.Join(o.WorkDir, "tables"), Key: o.Key,
		Base: begun.GetBase(), TableBytes: o.TableBytes, DataMissing: o.MetadataOnly, Replication: o.Replication, Progress: o.Progress,
		OnTable: up.add})
	if err != nil {
		up.stop()
		return nil, err
	}
	res.Result = *built
	tables, err := up.finish()
	if err != nil {
		return nil, err
	}
	if err := c.CommitImport(ctx, st.ID, o.Namespace, built.Root, tables); err != nil {
		return nil, fmt.Errorf("commit import into %s: %w", st.Namespace, err)
	}
	res.Elapsed = time.Since(start)
	return res, finished(o.WorkDir, &res.Result)
}

// finished clears the work directory of a committed import: its tables go,
// the list of files whose data did not come stays.
func finished(dir string, res *bulkload.Result) error {
	if res != nil && res.UnreachableList != "" {
		kept := filepath.Join(dir, "unreachable.txt")
		if err := os.Rename(res.UnreachableList, kept); err != nil {
			return err
		}
		res.UnreachableList = kept
	}
	return errors.Join(os.RemoveAll(filepath.Join(dir, "tables")), os.Remove(filepath.Join(dir, "import.json")))
}

// loadState reads import.json, or makes a new one with a new id.
func loadState(o Options) (state, bool, error) {
	path := filepath.Join(o.WorkDir, "import.json")
	want := state{Namespace: o.Namespace.GetName(), Key: o.Key}
	b, err := os.ReadFile(path)
	if err == nil {
		var st state
		if err := json.Unmarshal(b, &st); err != nil {
			return st, false, fmt.Errorf("%s: %w", path, err)
		}
		if st.Namespace != want.Namespace || st.Key != want.Key {
			return st, false, fmt.Errorf("%w: of %q into %s (remove %s, or give the same image and namespace)",
				ErrOtherImport, st.Key, st.Namespace, o.WorkDir)
		}
		return st, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return want, false, err
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return want, false, err
	}
	want.ID = hex.EncodeToString(id[:])
	b, _ = json.Marshal(want)
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return want, false, err
	}
	return want, false, os.Rename(path+".tmp", path)
}

// uploader ships the tables to the leader as the build finishes them, one
// at a time, skipping those the leader holds already.
type uploader struct {
	ctx  context.Context
	c    *client.Client
	id   string
	o    Options
	q    chan bulkload.Table
	done chan struct{}

	mu     sync.Mutex
	all    []bulkload.Table
	held   map[string]bool
	err    error
	sent   int64
	queued int64
}

func newUploader(ctx context.Context, c *client.Client, id string, o Options) *uploader {
	u := &uploader{ctx: ctx, c: c, id: id, o: o, q: make(chan bulkload.Table, 1<<16), done: make(chan struct{}), held: map[string]bool{}}
	if got, err := c.GetImport(ctx, id); err == nil {
		for _, t := range got.GetTables() {
			u.held[t.GetName()+" "+t.GetSha256()] = true
		}
	}
	go u.run()
	return u
}

// add queues a table the build finished.
func (u *uploader) add(t bulkload.Table) {
	u.mu.Lock()
	u.all = append(u.all, t)
	u.queued += t.Size
	u.mu.Unlock()
	u.q <- t
}

func (u *uploader) run() {
	defer close(u.done)
	for t := range u.q {
		if u.failed() || u.held[t.Name+" "+t.SHA256] {
			continue
		}
		if err := u.send(t); err != nil {
			u.mu.Lock()
			u.err = fmt.Errorf("upload %s: %w", t.Name, err)
			u.mu.Unlock()
		}
	}
}

func (u *uploader) failed() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err != nil
}

func (u *uploader) send(t bulkload.Table) error {
	base := u.sent
	path := filepath.Join(u.o.WorkDir, "tables", t.Name)
	err := u.c.UploadImport(u.ctx, u.id, path, &pb.ImportTable{Name: t.Name, Size: uint64(t.Size), Sha256: t.SHA256},
		func(n int64) {
			if u.o.Progress != nil {
				u.mu.Lock()
				total := u.queued
				u.mu.Unlock()
				u.o.Progress(Progress{Phase: "upload", Done: uint64(base + n), Total: uint64(total)})
			}
		})
	u.sent += t.Size
	return err
}

// stop ends the uploads after the one under way.
func (u *uploader) stop() {
	u.mu.Lock()
	if u.err == nil {
		u.err = context.Canceled
	}
	u.mu.Unlock()
	close(u.q)
	<-u.done
}

// finish waits for every table to be shipped and returns them all.
func (u *uploader) finish() ([]*pb.ImportTable, error) {
	close(u.q)
	<-u.done
	if u.err != nil {
		return nil, u.err
	}
	out := make([]*pb.ImportTable, len(u.all))
	for i, t := range u.all {
		out[i] = &pb.ImportTable{Name: t.Name, Size: uint64(t.Size), Sha256: t.SHA256}
	}
	return out, nil
}
