package fsshell

import (
	"sort"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/client"
)

// lsCmd is -ls, Hadoop's Ls.
type lsCmd struct {
	sh                   *shell
	f                    *lsFormat
	pathOnly, dirRecurse bool
	recursive, reverse   bool
	byTime, bySize       bool
	// slots bounds the first pages fetched ahead at once (lookahead).
	slots chan struct{}
	line  []byte // the line being printed
}

// lsGroup is how many entries of a recursive listing are laid out at a
// time, so that -ls -R streams a directory of any size (Ls's
// getListingGroupSize).
const lsGroup = 100

// lsAhead is how many directories' first pages a recursive listing fetches
// ahead of its walk (lookahead).
const lsAhead = 8

func runLs(sh *shell, args []string) error {
	cf := newFormat(0, unbounded, "C", "d", "h", "q", "R", "r", "t", "S", "u")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	ls := &lsCmd{sh: sh, f: newLsFormat(sh.loc), pathOnly: cf.opt("C"), dirRecurse: !cf.opt("d"),
		reverse: cf.opt("r"), byTime: cf.opt("t"), bySize: !cf.opt("t") && cf.opt("S"),
		slots: make(chan struct{}, lsAhead)}
	ls.recursive = cf.opt("R") && ls.dirRecurse
	// -q (Hadoop's: print ? for what is not printable) is what -ls always
	// does, so that every entry is one line; it is accepted for scripts.
	ls.f.human, ls.f.atime = cf.opt("h"), cf.opt("u")
	if len(args) == 0 {
		args = []string{"."}
	}
	for _, item := range sh.expandAll(args) {
		if !item.exists() {
			sh.fail(errNotFound(item.text))
			continue
		}
		if ls.dirRecurse && item.isDir() {
			ls.recurse(item, nil) // a directory argument lists its children
		} else {
			ls.paths(nil, []*pathData{item})
		}
	}
	return nil
}

// paths is Ls.processPaths: a directory's entries (parent set) or an
// argument (parent nil).
func (ls *lsCmd) paths(parent *pathData, items []*pathData) {
	if parent != nil && !ls.recursive && len(items) > 0 {
		if !ls.pathOnly {
			ls.sh.printf("Found %d items\n", len(items))
		}
		ls.sort(items)
	}
	if !ls.pathOnly {
		ls.f.adjust(items)
	}
	var ahead *lookahead
	if ls.recursive {
		ahead = ls.lookahead(items)
	}
	for _, it := range items {
		if ls.pathOnly {
			ls.line = appendPrintable(ls.line[:0], it.text)
		} else {
			ls.line = ls.f.appendLine(ls.line[:0], it.text, it.st)
		}
		ls.sh.out.Write(append(ls.line, '\n'))
		if ls.recursive && it.isDir() {
			ls.recurse(it, ahead.next())
		}
	}
}

// lookahead fetches the first pages of a group's directories ahead of the
// walk, lsAhead at a time and at most lsAhead at once in the whole listing:
// the walk then finds each directory's first page on its way, where it
// waited a round trip per directory (the Hadoop client's list prefetch does
// the same). A page fetched ahead may miss a change made meanwhile, as a
// page of a long listing may.
type lookahead struct {
	ls             *lsCmd
	dirs           []*pathData
	pages          []*firstPage
	taken, started int
}

// firstPage is a directory's first page of entries, once done is closed.
type firstPage struct {
	done chan struct{}
	page []*client.FileStatus
	more bool
	err  error
}

func (ls *lsCmd) lookahead(items []*pathData) *lookahead {
	a := &lookahead{ls: ls}
	for _, it := range items {
		if it.isDir() {
			a.dirs = append(a.dirs, it)
		}
	}
	a.pages = make([]*firstPage, len(a.dirs))
	a.fill()
	return a
}

// fill starts the fetches of the directories up to lsAhead past the last
// one taken.
func (a *lookahead) fill() {
	for a.started < len(a.dirs) && a.started < a.taken+lsAhead {
		a.pages[a.started] = a.ls.fetch(a.dirs[a.started])
		a.started++
	}
}

// next returns the first page of the group's next directory, in the order
// of items, and starts fetching another.
func (a *lookahead) next() *firstPage {
	p := a.pages[a.taken]
	a.pages[a.taken] = nil
	a.taken++
	a.fill()
	return p
}

// fetch starts fetching dir's first page.
func (ls *lsCmd) fetch(dir *pathData) *firstPage {
	p := &firstPage{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		ls.slots <- struct{}{}
		defer func() { <-ls.slots }()
		p.page, p.more, p.err = ls.sh.fs.ListPage(ls.sh.ctx, dir.uri(), "")
	}()
	return p
}

// sorted reports whether a directory is read whole before it is printed;
// otherwise it streams in groups (Ls.isSorted).
func (ls *lsCmd) sorted() bool {
	return !ls.recursive || ls.byTime || ls.bySize || ls.reverse
}

// recurse lists directory dir, starting with its first page if fetched
// ahead (first, nil if not).
func (ls *lsCmd) recurse(dir *pathData, first *firstPage) {
	size := lsGroup
	if ls.pathOnly {
		size = 1
	}
	var group []*pathData
	add := func(st *client.FileStatus) error {
		if st.Path == dir.abs { // it became a file: a file lists as itself
			return nil
		}
		group = append(group, dir.child(st))
		if !ls.sorted() && len(group) == size {
			ls.paths(dir, group)
			group = nil
		}
		return nil
	}
	if first != nil {
		<-first.done
	}
	var err error
	switch {
	case first == nil || first.err != nil:
		// A page fetched ahead that failed is asked for again, so that
		// the error is the one the walk meets now.
		err = ls.sh.fs.List(ls.sh.ctx, dir.uri(), add)
	default:
		for _, st := range first.page {
			_ = add(st) // add fails nothing
		}
		if first.more {
			err = ls.sh.fs.ListAfter(ls.sh.ctx, dir.uri(), first.page[len(first.page)-1].Name, add)
		}
	}
	if len(group) > 0 && (err == nil || !ls.sorted()) {
		ls.paths(dir, group)
	}
	if err != nil {
		ls.sh.fail(ls.sh.explain(dir.text, dir.abs, err))
	}
}

// sort orders a directory's entries: by name, or newest first (-t), or
// largest first (-S); -r reverses the comparison, ties keep name order.
func (ls *lsCmd) sort(items []*pathData) {
	sign := 1
	if ls.reverse {
		sign = -1
	}
	cmp := func(a, b *client.FileStatus) int { return strings.Compare(a.Path, b.Path) }
	switch {
	case ls.byTime:
		cmp = func(a, b *client.FileStatus) int { return ls.time(b).Compare(ls.time(a)) }
	case ls.bySize:
		cmp = func(a, b *client.FileStatus) int { return compareUint(b.Length, a.Length) }
	}
	sort.SliceStable(items, func(i, j int) bool { return sign*cmp(items[i].st, items[j].st) < 0 })
}

func (ls *lsCmd) time(st *client.FileStatus) time.Time {
	if ls.f.atime {
		return st.AccTime
	}
	return st.ModTime
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
