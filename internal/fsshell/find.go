package fsshell

import (
	"fmt"
	"strings"
)

// findExpr is one of -find's expressions, Hadoop's find.Expression: it
// tells whether item passes, and acts on it if it is an action.
type findExpr interface {
	apply(sh *shell, item *pathData) bool
	isAction() bool
}

// findAnd is Hadoop's And: its children in order, until one fails.
type findAnd []findExpr

func (a findAnd) apply(sh *shell, item *pathData) bool {
	for _, e := range a {
		if !e.apply(sh, item) {
			return false
		}
	}
	return true
}

func (a findAnd) isAction() bool {
	for _, e := range a {
		if e.isAction() {
			return true
		}
	}
	return false
}

// findName is -name and -iname: the item's last component against a glob,
// as Hadoop's GlobPattern matches it (lower-cased first for -iname).
type findName struct {
	glob     *globPattern
	caseless bool
}

func (n findName) apply(_ *shell, item *pathData) bool {
	name := item.name()
	if n.caseless {
		name = strings.ToLower(name)
	}
	return n.glob.re.MatchString(name)
}

func (findName) isAction() bool { return false }

// findPrint is -print and -print0: the path as given, then a newline or a
// NUL.
type findPrint string

func (p findPrint) apply(sh *shell, item *pathData) bool {
	sh.printf("%s%s", item.text, string(p))
	return true
}

func (findPrint) isAction() bool { return true }

// runFind is -find <path> ... <expression> ..., Hadoop's find.Find with the
// expressions Hadoop 3.4 registers: -name, -iname, -print, -print0, and
// -a/-and (or none: juxtaposition) between them, with parentheses. The
// paths come first (default the working directory); from the first word
// that starts with "-" on, the words are the expression (default -print,
// and -print is added to one without an action). Each path is walked
// depth first, a directory before its entries, in name order.
func runFind(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "L", "H")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	paths, words := args, []string(nil)
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			paths, words = args[:i], args[i:]
			break
		}
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	expr, rest, err := parseFind(words)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("Unexpected argument: %s", rest[0])
	}
	if !expr.isAction() {
		expr = findAnd{expr, findPrint("\n")}
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(paths) {
		if !item.exists() {
			sh.fail(errNotFound(item.text))
			continue
		}
		sh.walk(item, true, func(it *pathData) error { expr.apply(sh, it); return nil })
	}
	return nil
}

// parseFind parses the expression words up to a ")" or their end into the
// conjunction of their primaries, and returns the words after it.
func parseFind(words []string) (findExpr, []string, error) {
	var and findAnd
	for len(words) > 0 {
		w := words[0]
		words = words[1:]
		switch w {
		case "(":
			e, rest, err := parseFind(words)
			if err != nil {
				return nil, nil, err
			}
			and, words = append(and, e), rest
		case ")":
			return findOf(and), words, nil
		case "-a", "-and":
		case "-print":
			and = append(and, findPrint("\n"))
		case "-print0":
			and = append(and, findPrint("\x00"))
		case "-name", "-iname":
			if len(words) == 0 {
				return nil, nil, fmt.Errorf("Missing argument at 1")
			}
			pattern := words[0]
			words = words[1:]
			if w == "-iname" {
				pattern = strings.ToLower(pattern)
			}
			g, err := compileGlob(pattern)
			if err != nil {
				return nil, nil, err
			}
			and = append(and, findName{glob: g, caseless: w == "-iname"})
		default:
			return nil, nil, fmt.Errorf("Unexpected argument: %s", w)
		}
	}
	return findOf(and), nil, nil
}

// findOf is the expression of a conjunction: -print for none.
func findOf(and findAnd) findExpr {
	switch len(and) {
	case 0:
		return findPrint("\n")
	case 1:
		return and[0]
	}
	return and
}
