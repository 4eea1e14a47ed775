package fsshell

import "strings"

// runCp is -cp [-f] [-p | -p[topax]] [-d] <src> ... <dst>: files and
// directories (recursively) copied within the file system, or between its
// namespaces, each streamed from client.Open to <dst>._COPYING_ and renamed
// into place, as Hadoop's Cp does. Copies take the default block size and
// replication, not the source's, as in Hadoop.
func runCp(sh *shell, args []string) error {
	preserve, args, err := popPreserveOption(args)
	if err != nil {
		return err
	}
	cf := newFormat(2, unbounded, "f", "d")
	if args, err = cf.parse(args); err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	dst, err := sh.remoteDestination(args[len(args)-1])
	if err != nil {
		return err
	}
	flags := copyFlags{overwrite: cf.opt("f"), direct: cf.opt("d"), preserve: preserve}
	c := &cpCmd{toRemote{sh: sh, copyFlags: flags}}
	srcs := sh.expandAll(args[:len(args)-1])
	if err := checkDestination(sh.remoteDest(dst), len(srcs), c.overwrite); err != nil {
		return err
	}
	for _, src := range srcs {
		if err := c.argument(src, dst); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

// popPreserveOption is CommandWithDestination.popPreserveOption: the first
// -p or -p[topax] before "--", wherever it is, says what is preserved.
// Strata has no ACLs, whose superset the permission is, nor XAttrs.
func popPreserveOption(args []string) (attrs, []string, error) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-p") {
			continue
		}
		rest := append(append([]string(nil), args[:i]...), args[i+1:]...)
		if a == "-p" {
			return allAttrs, rest, nil
		}
		var p attrs
		for _, ch := range a[2:] {
			switch ch {
			case 't':
				p.times = true
			case 'o':
				p.owner = true
			case 'p', 'a':
				p.perm = true
			case 'x':
			default:
				return attrs{}, nil, usagef("No attribute for %c", ch)
			}
		}
		return p, rest, nil
	}
	return attrs{}, args, nil
}

type cpCmd struct{ toRemote }

// argument is processPathArgument: a directory may not be copied into
// itself.
func (c *cpCmd) argument(src, dst *pathData) error {
	if !src.exists() {
		return errNotFound(src.text)
	}
	if c.sh.nsName(src) == c.sh.nsName(dst) {
		if err := checkNotInside(src, targetOf(src, dst)); err != nil {
			return err
		}
	}
	return c.process(src, dst, 0)
}

func (c *cpCmd) process(src, dst *pathData, depth int) error {
	target, err := c.target(src.name(), dst, depth)
	if err != nil {
		return err
	}
	if src.isDir() {
		return c.copyDir(src, target, depth)
	}
	return c.copyFile(src, target)
}

func (c *cpCmd) copyFile(src, target *pathData) error {
	sh := c.sh
	r, err := sh.fs.Open(sh.ctx, src.uri())
	if err != nil {
		return sh.explain(src.text, src.abs, err)
	}
	defer r.Close()
	fail := func(err error) error { return sh.explain(src.text, src.abs, err) }
	if err := c.upload(source{r: r, size: r.Size(), label: src.text, fail: fail}, target); err != nil {
		return err
	}
	return c.preserveAttrs(target, src.st)
}

func (c *cpCmd) copyDir(src, target *pathData, depth int) error {
	if err := c.enterDir(target); err != nil {
		return err
	}
	c.sh.eachChild(src, func(child *pathData) {
		if err := c.process(child, target, depth+1); err != nil {
			c.sh.fail(err)
		}
	})
	return c.preserveAttrs(target, src.st)
}
