package fsshell

import (
	"time"
)

// touchLayouts are the -t TIMESTAMP forms: Hadoop's code parses
// yyyyMMdd:HHmmss, its help says yyyyMMddHHmmss; both are taken.
var touchLayouts = []string{"20060102:150405", "20060102150405"}

// touchCmd is -touch [-a] [-m] [-t TIMESTAMP] [-c].
type touchCmd struct {
	sh                   *shell
	atimeOnly, mtimeOnly bool
	noCreate             bool
	stamp                time.Time // zero: the current time
}

func runTouch(sh *shell, args []string) error {
	ts, args, hasT, err := popOptionWithArgument("-t", args)
	if err != nil {
		return err
	}
	cf := newFormat(1, unbounded, "t", "a", "m", "c")
	if args, err = cf.parse(args); err != nil {
		return err
	}
	t := &touchCmd{sh: sh, atimeOnly: cf.opt("a"), mtimeOnly: cf.opt("m"), noCreate: cf.opt("c")}
	if hasT {
		if t.stamp, err = parseStamp(ts, sh.loc); err != nil {
			return err
		}
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		if err := t.touch(item); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func parseStamp(s string, loc *time.Location) (time.Time, error) {
	for _, layout := range touchLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("Unable to parse the specified timestamp %s", s)
}

func (t *touchCmd) touch(item *pathData) error {
	sh := t.sh
	switch {
	case item.isDir():
		return errPath(item.text, msgIsDir)
	case item.exists():
		return t.setTimes(item)
	case !sh.existsRemote(item.parentOrSelf()):
		return errNotFound(item.text)
	case t.noCreate:
		return nil
	}
	if err := sh.createEmpty(item); err != nil {
		return err
	}
	if t.stamp.IsZero() {
		return nil
	}
	return t.setTimes(item)
}

// setTimes sets both times, or only one with -a or -m.
func (t *touchCmd) setTimes(item *pathData) error {
	now := t.stamp
	if now.IsZero() {
		now = t.sh.now()
	}
	mtime, atime := now, now
	if t.atimeOnly != t.mtimeOnly {
		if t.atimeOnly {
			mtime = time.Time{}
		} else {
			atime = time.Time{}
		}
	}
	err := t.sh.fs.SetTimes(t.sh.ctx, item.uri(), mtime, atime)
	return t.sh.explain(item.text, item.abs, err)
}
