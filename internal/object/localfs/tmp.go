package localfs

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// The temp directory, .strata-tmp: writes in flight and multipart uploads.
// It is made by the store's first write, so that a directory only read
// (a cache-mode namespace over file:///dir that nothing is put into) is
// left exactly as it was.

// tmp opens the temp directory, making it if it is missing.
func (s *Store) tmp() (*os.File, error) { return s.ensureDir(tmpDir) }

// uploads opens the directory of the multipart uploads, making it (and the
// temp directory) if it is missing.
func (s *Store) uploads() (*os.File, error) { return s.ensureDir(tmpDir + "/" + uploadsDir) }

// ensureDir opens the directory rel of the store's own, making it and its
// missing parents; a link there is refused, as everywhere.
func (s *Store) ensureDir(rel string) (*os.File, error) {
	d, err := s.openDir(rel)
	if !errors.Is(err, fs.ErrNotExist) {
		return d, err
	}
	dir, name := split(rel)
	var parent *os.File
	if dir == "" {
		parent, err = s.openDir("")
	} else {
		parent, err = s.ensureDir(dir)
	}
	if err != nil {
		return nil, err
	}
	err = mkdirAt(parent, name, 0o755)
	parent.Close()
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return s.openDir(rel)
}

// removeStaleTemps drops temp files and directories left by crashed writes;
// best effort, as they only cost space. Abandoned uploads are not touched:
// ListUploads finds them.
func (s *Store) removeStaleTemps() {
	d, err := s.openDir(tmpDir)
	if err != nil {
		return // none yet
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		if name == uploadsDir {
			continue
		}
		if st, err := lstatAt(d, name); err == nil && time.Since(st.modTime()) > staleTemp {
			_ = removeTree(d, name)
		}
	}
}

// temp is a file written in the temp directory, to be renamed into place.
type temp struct {
	dir  *os.File // the temp directory
	name string   // the file's name in it
	f    *os.File
}

// writeTemp creates a temp file, has fill write it, and fsyncs it. The file
// is returned open; the caller discards it.
func (s *Store) writeTemp(fill func(f *os.File) error) (*temp, error) {
	d, err := s.tmp()
	if err != nil {
		return nil, err
	}
	f, name, err := createTemp(d, "put-")
	if err != nil {
		d.Close()
		return nil, err
	}
	t := &temp{dir: d, name: name, f: f}
	err = fill(f)
	if err == nil {
		err = f.Sync() // data durable before the rename makes it visible
	}
	if err != nil {
		t.discard()
		return nil, err
	}
	return t, nil
}

// discard closes the temp file and removes it, unless it was renamed away.
func (t *temp) discard() {
	t.f.Close()
	_ = unlinkAt(t.dir, t.name, 0)
	t.dir.Close()
}
