package fsshell

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
)

// pathData is Hadoop's PathData: a path as the shell prints it, where it
// points, and its status (nil when nothing is there).
type pathData struct {
	text string             // the printable form, PathData.toString
	ns   string             // the namespace; "" is the client's
	abs  string             // absolute and clean, within the namespace
	st   *client.FileStatus // nil: the path does not exist
}

func (p *pathData) exists() bool { return p.st != nil }

func (p *pathData) isDir() bool { return p.st != nil && p.st.IsDir }

// uri is the path as the client takes it.
func (p *pathData) uri() string { return uriOf(p.ns, p.abs) }

func uriOf(ns, abs string) string {
	if ns == "" {
		return abs
	}
	return client.Scheme + ns + abs
}

// child is the entry st of directory p, printed below p's printable form
// as PathData.getStringForChildPath does (so relative paths stay relative).
// Its absolute path is the one the listing joined (FileStatus.Path).
func (p *pathData) child(st *client.FileStatus) *pathData {
	return &pathData{text: p.childText(st.Name), ns: p.ns, abs: st.Path, st: st}
}

// childNamed is p's child called name, whose status is not known.
func (p *pathData) childNamed(name string) *pathData {
	return &pathData{text: p.childText(name), ns: p.ns, abs: fspath.Join(p.abs, name)}
}

// childText is the printable form of p's child called name.
func (p *pathData) childText(name string) string {
	if p.text == "." {
		return name
	}
	if strings.HasSuffix(p.text, "/") {
		return p.text + name
	}
	return p.text + "/" + name
}

// name is the last component of the path ("" for a root).
func (p *pathData) name() string {
	if p.abs == "/" {
		return ""
	}
	return path.Base(p.abs)
}

// representsDir reports whether the path as written names a directory
// ("/a/", ".", ".."), as PathData.representsDirectory does.
func (p *pathData) representsDir() bool {
	base := p.text[strings.LastIndex(p.text, "/")+1:]
	return base == "" || base == "." || base == ".."
}

// pathForm is how a path was written, which decides how matches of a glob
// are printed (PathData.expandAsGlob's PathType).
type pathForm struct {
	scheme    bool   // strata://...
	relative  bool   // no scheme and no leading slash
	authority string // the namespace written after strata://, maybe ""
}

// display prints abs, a match of a pattern written in form f.
func (sh *shell) display(f pathForm, abs string, isDir bool) string {
	switch {
	case f.scheme:
		return client.Scheme + f.authority + abs
	case f.relative:
		return relativize(sh.home(), abs, isDir)
	}
	return abs
}

// resolve parses a path argument. Relative paths are under the user's
// home directory, /user/<user>, as in Hadoop.
func (sh *shell) resolve(arg string) (*pathData, pathForm, error) {
	if arg == "" {
		return nil, pathForm{}, usagef("Can not create a Path from an empty string")
	}
	p := &pathData{text: arg}
	var f pathForm
	colon, slash := strings.IndexByte(arg, ':'), strings.IndexByte(arg, '/')
	switch {
	case colon > 0 && slash == colon+1:
		scheme, rest := arg[:colon], arg[colon+1:]
		if scheme+"://" != client.Scheme {
			return nil, f, fmt.Errorf("No FileSystem for scheme %q", scheme)
		}
		f.scheme = true
		if strings.HasPrefix(rest, "//") && len(rest) > 2 {
			f.authority, rest, _ = strings.Cut(rest[2:], "/")
			rest = "/" + rest
		}
		p.ns, p.abs = f.authority, rest
	case strings.HasPrefix(arg, "/"):
		p.abs = arg
	default:
		f.relative = true
		p.abs = sh.home() + "/" + arg
	}
	// As Hadoop's Path: "//" is "/", "." and "name/.." go; ".." above the
	// root is refused, as HDFS refuses "/..".
	abs, err := fspath.Clean(p.abs)
	if err != nil {
		return nil, f, errInvalidPath(arg, err)
	}
	p.abs = abs
	return p, f, nil
}

// stat returns p's status, nil if nothing is there.
func (sh *shell) stat(p *pathData) (*client.FileStatus, error) {
	st, err := sh.fs.Stat(sh.ctx, p.uri())
	if errors.Is(err, fserr.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, sh.explain(p.text, p.abs, err)
	}
	return st, nil
}

// expand is PathData.expandAsGlob: a pattern becomes its matches, printed
// in the form it was written; a plain path that does not exist becomes
// itself without a status; a pattern that matches nothing is an error.
func (sh *shell) expand(arg string) ([]*pathData, error) {
	p, f, err := sh.resolve(arg)
	if err != nil {
		return nil, err
	}
	if !hasGlob(p.abs) {
		if p.st, err = sh.stat(p); err != nil || p.st == nil {
			return []*pathData{p}, err
		}
		p.text = sh.display(f, p.abs, p.st.IsDir)
		return []*pathData{p}, nil
	}
	matches, err := sh.glob(p.ns, p.abs)
	if err != nil {
		return nil, sh.explain(arg, p.abs, err)
	}
	if len(matches) == 0 {
		return nil, errNotFound(arg)
	}
	out := make([]*pathData, len(matches))
	for i, st := range matches {
		out[i] = &pathData{text: sh.display(f, st.Path, st.IsDir), ns: p.ns, abs: st.Path, st: st}
	}
	return out, nil
}

// expandAll is Command.expandArguments: every argument is expanded, errors
// are displayed and counted, and the matches of the others are returned. A
// usage error (an empty path) stops the command.
func (sh *shell) expandAll(args []string) []*pathData {
	var out []*pathData
	for _, a := range args {
		items, err := sh.expand(a)
		if ue := (*usageError)(nil); errors.As(err, &ue) {
			sh.usage = ue // Hadoop's IllegalArgumentException ends the command
			return nil
		}
		if err != nil {
			sh.fail(err)
			continue
		}
		out = append(out, items...)
	}
	return out
}

// relativize prints p relative to the directory cwd, as PathData does for
// the matches of a relative pattern.
func relativize(cwd, p string, isDir bool) string {
	if cwd == p {
		return "."
	}
	lastSep := longestDirPrefix(cwd, p, isDir)
	rel := ""
	if lastSep < len(p) {
		rel = p[lastSep+1:]
	}
	if lastSep < len(cwd) {
		for lastSep != -1 {
			if rel != "" {
				rel = "/" + rel
			}
			rel = ".." + rel
			next := strings.IndexByte(cwd[lastSep+1:], '/')
			if next < 0 {
				break
			}
			lastSep += next + 1
		}
	}
	return rel
}

func longestDirPrefix(cwd, p string, isDir bool) int {
	if !strings.HasSuffix(cwd, "/") {
		cwd += "/"
	}
	if isDir && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	lastSep := -1
	for i := 0; i < min(len(cwd), len(p)); i++ {
		if cwd[i] != p[i] {
			break
		}
		if cwd[i] == '/' {
			lastSep = i
		}
	}
	return lastSep
}
