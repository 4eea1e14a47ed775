package bulkload

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Table is one table of a build.
type Table struct {
	Name   string // in the work directory
	Size   int64
	SHA256 string // hex
	Keys   uint64
	// Stream is the key range the table is of; Next where the stream
	// goes on after it (a rank), for a build that resumes.
	Stream string
	Next   uint64
}

// manifest is what the work directory says of a build: its source and
// options, and the tables it finished.
type manifest struct {
	Version int
	Key     string
	Base    uint64
	Count   uint64
	Data    bool
	// Replication divides the space quotas (Options.Replication).
	Replication uint32
	Tables      []Table
	// Report is set once unreachable.txt is whole.
	Report bool

	path string
}

// manifestVersion 2: quotas in the inodes, not a table stream of their own.
const manifestVersion = 2

// ErrOtherBuild is a work directory that holds another build's tables.
var ErrOtherBuild = errors.New("bulkload: the work directory holds another build")

func loadManifest(o Options) (*manifest, error) {
	m := &manifest{Version: manifestVersion, Key: o.Key, Base: o.Base, Data: o.DataMissing,
		Replication: o.replication(), path: filepath.Join(o.Dir, "manifest.json")}
	b, err := os.ReadFile(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	var old manifest
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, fmt.Errorf("%s: %w", m.path, err)
	}
	if old.Version != m.Version || old.Key != m.Key || old.Base != m.Base || old.Data != m.Data || old.Replication != m.Replication {
		return nil, fmt.Errorf("%w (of %q at id %d): remove it, or give the same source and options", ErrOtherBuild, old.Key, old.Base)
	}
	old.path = m.path
	// A table the manifest lists must be there, whole.
	for _, t := range old.Tables {
		if err := checkTable(filepath.Join(filepath.Dir(m.path), t.Name), t); err != nil {
			return nil, fmt.Errorf("%w: %s: %v (remove the work directory and build again)", ErrOtherBuild, t.Name, err)
		}
	}
	return &old, nil
}

// save writes the manifest durably: a new file, synced, renamed over the
// old one.
func (m *manifest) save() error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := m.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
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
	if err := os.Rename(tmp, m.path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(m.path))
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// resume returns where stream goes on: after its last table listed.
func (m *manifest) resume(stream string) (next uint64, done bool) {
	for _, t := range m.Tables {
		if t.Stream == stream {
			next = t.Next
		}
	}
	return next, false
}

// FileSHA256 returns the hex SHA-256 of the file at path, and its size.
func FileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

func checkTable(path string, t Table) error {
	sum, size, err := FileSHA256(path)
	if err != nil {
		return err
	}
	if size != t.Size || sum != t.SHA256 {
		return fmt.Errorf("%d bytes hashing to %s, where the manifest has %d and %s", size, sum, t.Size, t.SHA256)
	}
	return nil
}
