// Package fspath is Strata's one rule for path names (docs/semantics.md,
// "Paths"): what a path given to any call must be (Split), what the names
// of new entries must be (SplitNew), and how the CLI cleans what a user
// types, as Hadoop's Path does before a NameNode sees it (Clean).
//
// The Go client checks a path before a call leaves, the service checks it
// again (internal/namespace on every operation, internal/metaserver on the
// names a call creates), and the Java client's StrataPath mirrors it; the
// cases in testdata/paths.txt are run by the tests of both languages. It
// does no I/O and knows nothing of namespaces.
package fspath

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratafs/strata/internal/fserr"
)

// Limits on paths, as HDFS sets them by default.
const (
	MaxNameLen = 255  // bytes of one component
	MaxPathLen = 8000 // bytes of a whole path
	MaxDepth   = 1000 // components of a path
)

// Error is a path that breaks the rule; Reason says which part of it. It
// wraps fserr.ErrInvalidPath.
type Error struct {
	Reason string
}

// Prefix begins the text of every Error, so that a message that crossed
// the wire ("mkdirs /a:b: invalid path: ...") still shows the reason.
const Prefix = "invalid path: "

func (e *Error) Error() string { return Prefix + e.Reason }

// Unwrap returns fserr.ErrInvalidPath.
func (e *Error) Unwrap() error { return fserr.ErrInvalidPath }

func invalid(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// Reason returns the reason an invalid-path error gives, also from its
// text once it crossed the wire, or "" when it gives none.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	_, r, _ := strings.Cut(err.Error(), Prefix)
	return r
}

// Split checks absolute path p and returns its components; the root ("/")
// has none. One trailing slash is accepted. Any name that may exist is
// accepted, including names with ':' or control characters that came from
// elsewhere, so that they can still be listed, renamed and deleted; the
// error is an *Error.
func Split(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, invalid("%.60q is not an absolute path", p)
	}
	if len(p) > MaxPathLen {
		return nil, invalid("the path is %d bytes long, longer than %d", len(p), MaxPathLen)
	}
	rest := strings.TrimSuffix(p[1:], "/")
	if rest == "" {
		return nil, nil
	}
	parts := strings.Split(rest, "/")
	if len(parts) > MaxDepth {
		return nil, invalid("the path has %d components, more than %d", len(parts), MaxDepth)
	}
	for _, c := range parts {
		if err := CheckName(c); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// CheckName checks one component of a path: a name an entry may have.
func CheckName(c string) error {
	switch {
	case c == "":
		return invalid("a name is empty (two slashes in a row)")
	case c == "." || c == "..":
		return invalid("%q is not allowed as a name", c)
	case len(c) > MaxNameLen:
		return invalid("the name %.40q... is %d bytes long, longer than %d", c, len(c), MaxNameLen)
	case !utf8.ValidString(c):
		return invalid("the name %q is not valid UTF-8", c)
	case strings.IndexByte(c, 0) >= 0:
		return invalid("the name %q holds a NUL character", c)
	}
	return nil
}

// SplitNew is Split for a path whose last components a call may create
// (create, mkdirs, a rename's destination): each component must also be a
// name a new entry may have (NewName).
func SplitNew(p string) ([]string, error) {
	parts, err := Split(p)
	if err != nil {
		return nil, err
	}
	for _, c := range parts {
		if err := NewName(c); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// NewName checks that c, a component that passed Split, may name a new
// entry: no ':' (HDFS's rule) and no control character (U+0000-U+001F,
// U+007F-U+009F: Strata's, so that no listing line is ever broken).
func NewName(c string) error {
	if strings.IndexByte(c, ':') >= 0 {
		return invalid("the name %q holds ':', which a name may not hold (as in HDFS)", c)
	}
	for _, r := range c {
		if unicode.IsControl(r) {
			return invalid("the name %q holds the control character %U, which a name may not hold", c, r)
		}
	}
	return nil
}

// Clean turns an absolute path as a user typed it into the path the client
// sends, as Hadoop's Path does: repeated slashes become one, a trailing
// slash goes, "." components go and "name/.." goes. A ".." above the root
// is an *Error (HDFS refuses "/.." too). Names are not checked here: Split
// does that, once the path leaves.
func Clean(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", invalid("%.60q is not an absolute path", p)
	}
	var out []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) == 0 {
				return "", invalid("\"..\" goes above the root")
			}
			out = out[:len(out)-1]
		default:
			out = append(out, c)
		}
	}
	return "/" + strings.Join(out, "/"), nil
}

// Join is path.Join(dir, name) for a listing's entries: a clean absolute
// dir and a name of one component are joined without cleaning again (a listing of
// millions of entries joins each); anything else goes through path.Join.
func Join(dir, name string) string { return NewJoiner(dir).Join(name) }

// Joiner joins one directory with names, as Join does, having checked the
// directory once: a listing's page joins its directory with each entry.
type Joiner struct {
	dir   string
	clean bool // dir is absolute and clean
}

// NewJoiner returns a Joiner for dir.
func NewJoiner(dir string) Joiner {
	return Joiner{dir: dir, clean: strings.HasPrefix(dir, "/") && path.Clean(dir) == dir}
}

// Dir is the directory j joins names with.
func (j Joiner) Dir() string { return j.dir }

// Join returns path.Join(j's directory, name).
func (j Joiner) Join(name string) string {
	if !j.clean || name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return path.Join(j.dir, name)
	}
	if j.dir == "/" {
		return "/" + name
	}
	return j.dir + "/" + name
}
