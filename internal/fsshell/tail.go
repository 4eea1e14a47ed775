package fsshell

import (
	"io"
	"strconv"
	"time"
)

// tailBytes is how much of the end of a file -tail shows.
const tailBytes = 1024

// defaultFollowDelay is how often -tail -f looks at the file's length.
// NB: Hadoop waits 5 s; Strata's length check is one cheap Stat.
const defaultFollowDelay = time.Second

// minFollowDelay is the shortest wait between two looks of -tail -f: a
// shorter -s (Hadoop takes 0) is raised to it. NB: without a wait, the
// command asked the service for the file's length as fast as it answered,
// and kept a core of the service (and one of the client) busy doing so;
// ten looks a second cost it nothing to speak of.
const minFollowDelay = 100 * time.Millisecond

// runTail is -tail [-f] [-s <sleep interval>] <file>, Hadoop's Tail: the
// last KiB of the file and, with -f, whatever is past the last position
// each time the length is looked at, until interrupted. As in Hadoop the
// path is not a pattern.
func runTail(sh *shell, args []string) error {
	sleep, args, hasSleep, err := popOptionWithArgument("-s", args)
	if err != nil {
		return err
	}
	cf := newFormat(1, 1, "f")
	if args, err = cf.parse(args); err != nil {
		return err
	}
	follow, delay := cf.opt("f"), defaultFollowDelay
	if follow && hasSleep {
		if delay, err = parseMillis(sleep); err != nil {
			return err
		}
		delay = max(delay, minFollowDelay)
	}
	if err := sh.connect(); err != nil {
		return err
	}
	item, _, err := sh.resolve(args[0])
	if err != nil {
		return err
	}
	if item.st, err = sh.stat(item); err != nil {
		return err
	}
	switch {
	case !item.exists():
		return errNotFound(item.text)
	case item.isDir():
		return errPath(item.text, msgIsDir)
	}
	return sh.tail(item, follow, delay)
}

// parseMillis reads -s, milliseconds as Java's Long.parseLong does.
func parseMillis(s string) (time.Duration, error) {
	ms, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return 0, usagef("For input string: \"%s\"", s)
	case ms < 0:
		return 0, usagef("timeout value is negative")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// tail shows the end of item, then follows it until the pause fails (the
// command's context ends).
func (sh *shell) tail(item *pathData, follow bool, delay time.Duration) error {
	off, err := sh.dumpFrom(item, -tailBytes)
	for follow && err == nil {
		_ = sh.out.Flush()
		if sh.pause(sh.ctx, delay) != nil {
			return nil
		}
		off, err = sh.dumpFrom(item, off)
	}
	return err
}

// dumpFrom is Tail.dumpFromOffset: item's content from off (from the end
// if negative) to its end, and the offset reached. A file now shorter than
// off is followed from its new end, without printing.
func (sh *shell) dumpFrom(item *pathData, off int64) (int64, error) {
	st, err := sh.fs.Stat(sh.ctx, item.uri())
	if err != nil {
		return off, sh.explain(item.text, item.abs, err)
	}
	size := int64(st.Length)
	if off >= size {
		return size, nil
	}
	if off < 0 {
		off = max(size+off, 0)
	}
	r, err := sh.fs.Open(sh.ctx, item.uri())
	if err != nil {
		return off, sh.explain(item.text, item.abs, err)
	}
	defer r.Close()
	if off, err = r.Seek(off, io.SeekStart); err != nil {
		return off, sh.explain(item.text, item.abs, err)
	}
	n, err := sh.transfer(sh.out, r, -1, "")
	return off + n, sh.explain(item.text, item.abs, err)
}
