package fsshell

import "github.com/stratafs/strata/internal/client"

// walk is Command.processPaths with recursion: fn on item, then, when
// recursive and item is a directory, on everything below it, depth first in
// name order. A failure of fn is displayed and skips what is below that
// path; memory is one listing page per level.
func (sh *shell) walk(item *pathData, recursive bool, fn func(*pathData) error) {
	if err := fn(item); err != nil {
		sh.fail(err)
		return
	}
	if recursive && item.isDir() {
		sh.eachChild(item, func(c *pathData) { sh.walk(c, true, fn) })
	}
}

// eachChild calls fn for each entry of directory dir, displaying a failure
// to list it.
func (sh *shell) eachChild(dir *pathData, fn func(*pathData)) {
	err := sh.fs.List(sh.ctx, dir.uri(), func(st *client.FileStatus) error {
		if st.Path != dir.abs { // a file lists as itself
			fn(dir.child(st))
		}
		return nil
	})
	if err != nil {
		sh.fail(sh.explain(dir.text, dir.abs, err))
	}
}
