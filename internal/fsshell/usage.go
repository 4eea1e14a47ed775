package fsshell

import (
	"fmt"
	"strconv"

	"github.com/stratafs/strata/internal/client"
)

// runDu is -du, Hadoop's FsUsage.Du: one row per file or directory, a
// directory argument showing its children unless -s. Sizes come from the
// service's content summaries, never from walking a tree.
func runDu(sh *shell, args []string) error {
	cf := newFormat(0, unbounded, "h", "s", "v", "x")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	t := newTable(3)
	if cf.opt("v") {
		t = newTable(3, "SIZE", "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS", "FULL_PATH_NAME")
	}
	size := func(n uint64) string { return strconv.FormatUint(n, 10) }
	if cf.opt("h") {
		size = humanSize
	}
	row := func(it *pathData) {
		if sum, err := sh.fs.ContentSummary(sh.ctx, it.uri()); err != nil {
			sh.fail(sh.explain(it.text, it.abs, err))
		} else {
			sh.noteLoadedOnly("du", it, sum)
			t.add(size(sum.Length), size(sum.SpaceConsumed), it.text)
		}
	}
	for _, item := range sh.expandAll(args) {
		switch {
		case !item.exists():
			sh.fail(errNotFound(item.text))
		case item.isDir() && !cf.opt("s"):
			sh.eachChild(item, row)
		default:
			row(item)
		}
	}
	sh.printf("%s", t)
	return nil
}

// runCount is -count, Hadoop's Count, in ContentSummary's and QuotaUsage's
// column layouts.
func runCount(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "q", "h", "v", "u", "x")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	quotas, usageOnly, human := cf.opt("q"), cf.opt("u"), cf.opt("h")
	if cf.opt("v") {
		switch {
		case usageOnly:
			sh.printf("%sPATHNAME\n", quotaHeader)
		case quotas:
			sh.printf("%s%sPATHNAME\n", quotaHeader, countHeader)
		default:
			sh.printf("%sPATHNAME\n", countHeader)
		}
	}
	for _, item := range sh.expandAll(args) {
		if !item.exists() {
			sh.fail(errNotFound(item.text))
			continue
		}
		sum, err := sh.fs.ContentSummary(sh.ctx, item.uri())
		if err != nil {
			sh.fail(sh.explain(item.text, item.abs, err))
			continue
		}
		sh.noteLoadedOnly("count", item, sum)
		if usageOnly {
			sh.printf("%s%s\n", quotaLine(sum, human), item.text)
			continue
		}
		sh.printf("%s%s\n", countLine(sum, quotas, human), item.text)
	}
	return nil
}

// noteLoadedOnly says once, on standard error, that the figures of a
// cache-mode path count only what Strata has loaded from its bucket.
func (sh *shell) noteLoadedOnly(cmd string, item *pathData, sum *client.ContentSummary) {
	if !sum.LoadedOnly || sh.notedLoaded {
		return
	}
	sh.notedLoaded = true
	fmt.Fprintf(sh.errw, "%s: note: %s is in a cache-mode namespace: the figures count what Strata has loaded "+
		"from its bucket ('strata admin load --metadata PATH' loads a subtree whole)\n", cmd, item.text)
}
