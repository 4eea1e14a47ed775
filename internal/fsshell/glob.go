package fsshell

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// globPattern is one path component of a glob, compiled as Hadoop's
// GlobPattern compiles it: * ? [set] [!set] {a,b} and \ escapes.
type globPattern struct {
	re      *regexp.Regexp
	wild    bool   // has a wildcard; otherwise literal names the component
	literal string // the component without its escapes
}

// compileGlob compiles one component.
func compileGlob(glob string) (*globPattern, error) {
	var c globCompiler
	for i := 0; i < len(glob); i++ {
		var err error
		if i, err = c.char(glob, i); err != nil {
			return nil, err
		}
	}
	if c.setOpen {
		return nil, globError("Unclosed character class", glob, len(glob))
	}
	if c.curlyOpen > 0 {
		return nil, globError("Unclosed group", glob, len(glob))
	}
	re, err := regexp.Compile("^(?s:" + c.re.String() + ")$")
	if err != nil {
		return nil, fmt.Errorf("Illegal file pattern: %v for glob %s", err, glob)
	}
	return &globPattern{re: re, wild: c.wild, literal: c.lit.String()}, nil
}

// globCompiler is the state of compileGlob: the regular expression and the
// unescaped literal so far, and the open set and groups.
type globCompiler struct {
	re, lit   strings.Builder
	wild      bool
	setOpen   bool
	curlyOpen int
}

// char translates glob[i] and returns the index of the last byte it used.
func (c *globCompiler) char(glob string, i int) (int, error) {
	ch := glob[i]
	switch {
	case ch == '\\':
		if i++; i >= len(glob) {
			return i, globError("Missing escaped character", glob, i)
		}
		c.re.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		c.lit.WriteByte(glob[i])
	case ch == '*' || ch == '?':
		c.re.WriteString(map[byte]string{'*': ".*", '?': "."}[ch])
		c.wild = true
	case ch == '{':
		c.re.WriteString("(?:")
		c.curlyOpen++
		c.wild = true
	case ch == ',' && c.curlyOpen > 0:
		c.re.WriteByte('|')
	case ch == '}' && c.curlyOpen > 0:
		c.re.WriteByte(')')
		c.curlyOpen--
	case ch == '[':
		if c.setOpen {
			return i, globError("Unclosed character class", glob, i)
		}
		c.setOpen, c.wild = true, true
		c.re.WriteByte(ch)
	case ch == '!' && c.setOpen && glob[i-1] == '[':
		c.re.WriteByte('^')
	case ch == '^' && c.setOpen: // a negation, or a caret in the set
		c.re.WriteByte(ch)
	case ch == ']' && c.setOpen:
		c.setOpen = false
		c.re.WriteByte(ch)
	default:
		c.re.WriteString(regexp.QuoteMeta(string(ch)))
		c.lit.WriteByte(ch)
	}
	return i, nil
}

func globError(msg, glob string, pos int) error {
	return fmt.Errorf("Illegal file pattern: %s for glob %s at %d", msg, glob, pos)
}

// hasGlob reports whether a path has a wildcard outside escapes.
func hasGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[', '{':
			return true
		}
	}
	return false
}

// expandBraces expands the groups {a,b} that contain a slash into whole
// patterns, leaving the others to compileGlob, as Hadoop's GlobExpander.
func expandBraces(pattern string) []string {
	open, close := slashGroup(pattern)
	if open < 0 {
		return []string{pattern}
	}
	var out []string
	for _, alt := range alternatives(pattern[open+1 : close]) {
		out = append(out, expandBraces(pattern[:open]+alt+pattern[close+1:])...)
	}
	return out
}

// slashGroup finds the leftmost outermost {...} containing a slash.
func slashGroup(p string) (int, int) {
	depth, open, slash := 0, -1, false
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open, slash = i, false
			}
			depth++
		case '/':
			slash = slash || depth > 0
		case '}':
			if depth == 0 {
				continue
			}
			if depth--; depth == 0 && slash {
				return open, i
			}
		}
	}
	return -1, -1
}

// alternatives splits the inside of a group at its top-level commas.
func alternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// glob returns the statuses of the paths of namespace ns that match the
// absolute pattern, in listing order, as Hadoop's Globber: wildcard
// components are matched by listing, literal ones are joined and the final
// candidates checked to exist.
func (sh *shell) glob(ns, pattern string) ([]*client.FileStatus, error) {
	var out []*client.FileStatus
	for _, flat := range expandBraces(pattern) {
		got, err := sh.globFlat(ns, flat)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

func (sh *shell) globFlat(ns, pattern string) ([]*client.FileStatus, error) {
	cands := []*client.FileStatus{{Path: "/", IsDir: true}}
	comps := strings.Split(strings.Trim(path.Clean(pattern), "/"), "/")
	for i, comp := range comps {
		g, err := compileGlob(comp)
		if err != nil {
			return nil, err
		}
		if g.wild {
			cands, err = sh.globMatch(ns, cands, g)
		} else {
			cands = joinLiteral(cands, g.literal)
			if i == len(comps)-1 {
				cands, err = sh.globStat(ns, cands)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return cands, nil
}

func joinLiteral(cands []*client.FileStatus, name string) []*client.FileStatus {
	out := make([]*client.FileStatus, len(cands))
	for i, c := range cands {
		out[i] = &client.FileStatus{Path: path.Join(c.Path, name), Name: name}
	}
	return out
}

// globMatch lists each candidate directory and keeps the entries g matches.
func (sh *shell) globMatch(ns string, cands []*client.FileStatus, g *globPattern) ([]*client.FileStatus, error) {
	var out []*client.FileStatus
	for _, c := range cands {
		var got []*client.FileStatus
		err := sh.fs.List(sh.ctx, uriOf(ns, c.Path), func(st *client.FileStatus) error {
			if st.Path == c.Path { // a file lists as itself: nothing below it
				return nil
			}
			if g.re.MatchString(st.Name) {
				got = append(got, st)
			}
			return nil
		})
		if errors.Is(err, fserr.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// globStat keeps the candidates that exist, with their statuses.
func (sh *shell) globStat(ns string, cands []*client.FileStatus) ([]*client.FileStatus, error) {
	var out []*client.FileStatus
	for _, c := range cands {
		st, err := sh.fs.Stat(sh.ctx, uriOf(ns, c.Path))
		if errors.Is(err, fserr.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
