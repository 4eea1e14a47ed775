package fsshell

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// localPath is a path of the local file system, the source of -put and the
// destination of -get.
type localPath struct {
	text string      // as written, or derived from what was written
	path string      // for the os package
	fi   os.FileInfo // nil: nothing is there
}

// statLocal looks p up, following symbolic links as Hadoop's local file
// system does.
func statLocal(text string) (*localPath, error) {
	p := &localPath{text: text, path: filepath.FromSlash(text)}
	fi, err := os.Stat(p.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil
	case err != nil:
		return nil, localError(text, err)
	}
	p.fi = fi
	return p, nil
}

func (p *localPath) exists() bool { return p.fi != nil }

func (p *localPath) isDir() bool { return p.fi != nil && p.fi.IsDir() }

func (p *localPath) name() string { return filepath.Base(p.path) }

// child is p's entry called name, looked up.
func (p *localPath) child(name string) (*localPath, error) {
	text := name
	if p.text != "." {
		text = strings.TrimSuffix(p.text, "/") + "/" + name
	}
	return statLocal(text)
}

// representsDir: see pathData.representsDir.
func (p *localPath) representsDir() bool {
	base := p.text[strings.LastIndex(p.text, "/")+1:]
	return base == "" || base == "." || base == ".."
}

// parentExists is PathData.parentExists for a local path.
func (p *localPath) parentExists() bool {
	dir := filepath.Dir(p.path)
	if p.representsDir() {
		dir = p.path
	}
	_, err := os.Stat(dir)
	return err == nil
}

// localError is how a local failure is displayed.
func localError(text string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errNotFound(text)
	case errors.Is(err, fs.ErrPermission):
		return errPath(text, "Permission denied")
	case errors.Is(err, fs.ErrExist):
		return errPath(text, msgExists)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return errPath(text, msgIO+": "+err.Error())
}

// localOwner returns the names of a local file's owner and group, "" for
// what cannot be named.
func localOwner(fi os.FileInfo) (string, string) {
	uid, gid, ok := fileIDs(fi)
	if !ok {
		return "", ""
	}
	var owner, group string
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		owner = u.Username
	}
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		group = g.Name
	}
	return owner, group
}

// chownLocal gives a local file the named owner and group, as -get -p
// does; names this host does not know are an error.
func chownLocal(p string, owner, group string) error {
	u, err := user.Lookup(owner)
	if err != nil {
		return err
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(g.Gid)
	return os.Chown(p, uid, gid)
}

// localMode is a local file's mode in HDFS's bits: rwx triplets and sticky.
func localMode(fi os.FileInfo) uint32 {
	m := uint32(fi.Mode().Perm())
	if fi.Mode()&os.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
}

// osMode is the reverse of localMode.
func osMode(perm uint32) os.FileMode {
	m := os.FileMode(perm & 0o777)
	if perm&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

// localTimes returns a local file's modification and access times.
func localTimes(fi os.FileInfo) (time.Time, time.Time) {
	return fi.ModTime(), accessTime(fi)
}
