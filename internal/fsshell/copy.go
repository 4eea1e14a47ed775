package fsshell

import (
	"errors"
	"io"
	"os"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
)

// copyingSuffix names the file a copy writes before renaming it into place,
// so that a reader never sees half a file (Hadoop's "._COPYING_"). If the
// copy is killed, the service removes the file when its lease expires
// (namespace.CopyingSuffix) instead of closing it.
const copyingSuffix = "._COPYING_"

// runCat is -cat: each file's content to standard output, streamed.
func runCat(sh *shell, args []string) error {
	return sh.eachMatch(newFormat(1, unbounded, "ignoreCrc"), args, sh.cat)
}

// eachMatch is the loop of the commands that take patterns (-cat, -text,
// -checksum): the options parsed by cf (which fn may read), then each
// pattern's matches given to fn, a failure reported and the rest done.
func (sh *shell) eachMatch(cf *cmdFormat, args []string, fn func(*pathData) error) error {
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		if err := fn(item); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func (sh *shell) cat(item *pathData) error {
	r, err := sh.openFile(item)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = sh.transfer(sh.out, r, -1, "")
	return sh.explain(item.text, item.abs, err)
}

// openFile opens item to read it, refusing as Hadoop does what is missing
// or a directory.
func (sh *shell) openFile(item *pathData) (*client.Reader, error) {
	switch {
	case !item.exists():
		return nil, errNotFound(item.text)
	case item.isDir():
		return nil, errPath(item.text, msgIsDir)
	}
	r, err := sh.fs.Open(sh.ctx, item.uri())
	if err != nil {
		return nil, sh.explain(item.text, item.abs, err)
	}
	return r, nil
}

// runAppendToFile is -appendToFile: the local sources (- for stdin), in
// order, after what dst holds, or as a new dst.
func runAppendToFile(sh *shell, args []string) error {
	if len(args) < 2 {
		return errors.New("missing destination argument")
	}
	srcs, dstArg := args[:len(args)-1], args[len(args)-1]
	if err := sh.connect(); err != nil {
		return err
	}
	for _, s := range srcs {
		if s == "-" {
			continue
		}
		if src, err := statLocal(s); err != nil {
			return err
		} else if !src.exists() {
			return errNotFound(s)
		} else if src.isDir() {
			return errPath(s, msgIsDir)
		}
	}
	dst, _, err := sh.resolve(dstArg)
	if err != nil {
		return err
	}
	st, err := sh.stat(dst)
	if err != nil {
		return err
	}
	var w *client.Writer
	switch {
	case st != nil && st.IsDir:
		return errPath(dstArg, msgIsDir)
	case st != nil:
		w, err = sh.fs.Append(sh.ctx, dst.uri())
	default:
		w, err = sh.fs.Create(sh.ctx, dst.uri(), client.CreateOptions{NonRecursive: true})
	}
	if err != nil {
		return sh.explain(dstArg, dst.abs, err)
	}
	for _, s := range srcs {
		if err := sh.appendFrom(w, s); err != nil {
			w.Close()
			return err
		}
	}
	return sh.explain(dstArg, dst.abs, w.Close())
}

// appendFrom copies local file s (- for stdin) to w.
func (sh *shell) appendFrom(w *client.Writer, s string) error {
	var r io.Reader = sh.stdin
	size := int64(-1)
	if s != "-" {
		f, err := os.Open(s)
		if err != nil {
			return localError(s, err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
		}
		r = f
	}
	if _, err := sh.transfer(w, r, size, s); err != nil {
		var re *readError
		if errors.As(err, &re) {
			return localError(s, re.err)
		}
		return err
	}
	return nil
}

// copyFlags are the options -put, -get and -cp share.
type copyFlags struct {
	overwrite, direct bool
	preserve          attrs
}

// attrs are the attributes a copy preserves: Hadoop's FileAttribute
// TIMESTAMPS, OWNERSHIP and PERMISSION (Strata has no ACLs or XAttrs).
type attrs struct{ times, owner, perm bool }

// allAttrs is what a bare -p preserves.
var allAttrs = attrs{times: true, owner: true, perm: true}

func (a attrs) any() bool { return a != attrs{} }

func preserveIf(p bool) attrs {
	if p {
		return allAttrs
	}
	return attrs{}
}

// source is what a copy reads: the stream, its length for the progress bar
// (-1: unknown), its label there, and how a failure to read it is shown.
type source struct {
	r     io.Reader
	size  int64
	label string
	fail  func(error) error
}

// toRemote is the half of CommandWithDestination that -put and -cp share:
// choosing targets in the file system, making directories, and writing
// streams through <target>._COPYING_.
type toRemote struct {
	sh *shell
	copyFlags
}

// target is getTargetPath: below dst when dst is a directory (always below
// the top level), else dst itself.
func (c *toRemote) target(name string, dst *pathData, depth int) (*pathData, error) {
	if depth == 0 && !dst.isDir() && !dst.representsDir() {
		return dst, nil
	}
	t := dst.childNamed(name)
	st, err := c.sh.stat(t)
	t.st = st
	return t, err
}

// enterDir is the first half of recursePath: the target of a directory
// must be one, and is made if missing.
func (c *toRemote) enterDir(target *pathData) error {
	sh := c.sh
	switch {
	case target.exists() && !target.isDir():
		return errPath(target.text, msgNotDir)
	case !target.exists():
		if _, err := sh.fs.Mkdirs(sh.ctx, target.uri(), 0o777); err != nil {
			return sh.explain(target.text, target.abs, err)
		}
	}
	return nil
}

// upload streams src into target through target._COPYING_ (unless -d),
// which it removes if anything fails.
func (c *toRemote) upload(src source, target *pathData) error {
	sh := c.sh
	if target.exists() && (target.isDir() || !c.overwrite) {
		return errPath(target.text, msgExists)
	}
	// The target's name, not its temporary one's, is what the rule refuses.
	if _, err := fspath.SplitNew(target.abs); err != nil {
		return errInvalidPath(target.text, err)
	}
	tmp := target
	if !c.direct {
		tmp = &pathData{text: target.text + copyingSuffix, ns: target.ns, abs: target.abs + copyingSuffix}
	}
	w, err := sh.fs.Create(sh.ctx, tmp.uri(), client.CreateOptions{Overwrite: true, NonRecursive: true})
	if errors.Is(err, fserr.ErrNotFound) {
		// Hadoop's PathNotFoundException of a missing parent, with the
		// target's qualified path.
		return errPath(target.text, msgNotFound+": `"+sh.qualified(target.ns, target.abs)+"'")
	}
	if err != nil {
		return sh.explain(target.text, target.abs, err)
	}
	_, err = sh.transfer(w, src.r, src.size, src.label)
	cerr := w.Close()
	if err == nil {
		err = cerr
	}
	if err == nil && tmp != target {
		err = sh.fs.Rename2(sh.ctx, tmp.uri(), target.uri(), true)
	}
	if err == nil {
		return nil
	}
	if cerr == nil { // a writer that failed removed its file itself
		_, _ = sh.fs.Delete(sh.ctx, tmp.uri(), false)
	}
	if re := (*readError)(nil); errors.As(err, &re) {
		return src.fail(re.err)
	}
	return sh.explain(target.text, target.abs, err)
}

// preserveAttrs gives target the attributes of st that -p asked for, as
// preserveAttributes does: times, then ownership, then the mode.
func (c *toRemote) preserveAttrs(target *pathData, st *client.FileStatus) error {
	sh, p := c.sh, c.preserve
	var err error
	if p.times {
		err = sh.fs.SetTimes(sh.ctx, target.uri(), st.ModTime, st.AccTime)
	}
	if err == nil && p.owner && (st.Owner != "" || st.Group != "") {
		err = sh.fs.SetOwner(sh.ctx, target.uri(), st.Owner, st.Group)
	}
	if err == nil && p.perm {
		err = sh.fs.SetPermission(sh.ctx, target.uri(), st.Perm)
	}
	return sh.explain(target.text, target.abs, err)
}

// runPut is -put and -copyFromLocal: local files and directories
// (recursively) into the file system, each written to <dst>._COPYING_ and
// renamed into place. Everything is streamed through client.Create.
func runPut(sh *shell, args []string) error { return put(sh, args, false) }

// put is -put, or -moveFromLocal if move.
func put(sh *shell, args []string, move bool) error {
	cf := newFormat(1, unbounded, "f", "p", "l", "d")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	dstArg := "."
	if len(args) > 1 {
		dstArg, args = args[len(args)-1], args[:len(args)-1]
	}
	dst, err := sh.remoteDestination(dstArg)
	if err != nil {
		return err
	}
	flags := copyFlags{overwrite: cf.opt("f"), direct: cf.opt("d"), preserve: preserveIf(cf.opt("p"))}
	c := &putCmd{toRemote: toRemote{sh: sh, copyFlags: flags}, move: move}
	if len(args) == 1 && args[0] == "-" {
		return c.fromStdin(dst)
	}
	if err := checkDestination(sh.remoteDest(dst), len(args), c.overwrite); err != nil {
		return err
	}
	c.all(args, dst)
	return nil
}

type putCmd struct {
	toRemote
	move bool // -moveFromLocal: each source goes once copied
}

// fromStdin is "-put - dst": standard input into dst (or, as in Hadoop, a
// file called "-" in dst when dst is a directory).
func (c *putCmd) fromStdin(dst *pathData) error {
	target, err := c.target("-", dst, 0)
	if err != nil {
		return err
	}
	fail := func(err error) error { return localError("-", err) }
	return c.upload(source{r: c.sh.stdin, size: -1, label: "-", fail: fail}, target)
}

// all copies each local source into dst.
func (c *putCmd) all(args []string, dst *pathData) {
	for _, a := range args {
		src, err := statLocal(a)
		if err == nil && !src.exists() {
			err = errNotFound(a)
		}
		if err == nil {
			err = c.process(src, dst, 0)
		}
		if err != nil {
			c.sh.fail(err)
		}
	}
}

func (c *putCmd) process(src *localPath, dst *pathData, depth int) error {
	target, err := c.target(src.name(), dst, depth)
	if err != nil {
		return err
	}
	if src.isDir() {
		if c.move && target.exists() { // a move does not merge directories
			return errPath(target.text, msgExists)
		}
		return c.moved(src, c.copyDir(src, target, depth))
	}
	f, err := os.Open(src.path)
	if err != nil {
		return localError(src.text, err)
	}
	defer f.Close()
	fail := func(err error) error { return localError(src.text, err) }
	if err := c.upload(source{r: f, size: src.fi.Size(), label: src.text, fail: fail}, target); err != nil {
		return err
	}
	return c.moved(src, c.preserveLocal(src, target))
}

// moved removes the local src once it was copied whole (err nil), for
// -moveFromLocal: a directory only if nothing is left in it (an entry that
// failed stays), as Hadoop's non-recursive delete.
func (c *putCmd) moved(src *localPath, err error) error {
	if err != nil || !c.move {
		return err
	}
	if os.Remove(src.path) != nil {
		return &pathError{op: "remove", path: src.text, msg: msgIO}
	}
	return nil
}

func (c *putCmd) copyDir(src *localPath, target *pathData, depth int) error {
	if err := c.enterDir(target); err != nil {
		return err
	}
	entries, err := os.ReadDir(src.path)
	if err != nil {
		return localError(src.text, err)
	}
	for _, e := range entries {
		child, err := src.child(e.Name())
		if err == nil {
			err = c.process(child, target, depth+1)
		}
		if err != nil {
			c.sh.fail(err)
		}
	}
	return c.preserveLocal(src, target)
}

// preserveLocal gives target the local src's times, ownership and mode
// (-p).
func (c *putCmd) preserveLocal(src *localPath, target *pathData) error {
	if !c.preserve.any() {
		return nil
	}
	mtime, atime := localTimes(src.fi)
	owner, group := localOwner(src.fi)
	return c.preserveAttrs(target, &client.FileStatus{ModTime: mtime, AccTime: atime,
		Owner: owner, Group: group, Perm: localMode(src.fi)})
}
