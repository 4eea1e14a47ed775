package fsshell

import (
	"fmt"
	"math"
	"strconv"
)

// runDf is -df [-h] [<path> ...], Hadoop's FsUsage.Df: per path, its file
// system's capacity, use and what remains. A namespace's bucket has no
// capacity to speak of, so Strata says Java's Long.MAX_VALUE bytes, as
// FileSystem.getStatus does for stores without one, and the bytes the
// namespace holds (its root's aggregate, from the service) as used: the
// StrataFileSystem's getStatus answers the same, so that hadoop fs -df
// prints what this does.
func runDf(sh *shell, args []string) error {
	cf := newFormat(0, unbounded, "h")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		args = []string{"/"}
	}
	if err := sh.connect(); err != nil {
		return err
	}
	size := func(n uint64) string { return strconv.FormatUint(n, 10) }
	if cf.opt("h") {
		size = humanSize
	}
	// NB: Hadoop hides the "Mounted on" column but for a ViewFileSystem's mounts.
	t := newTable(5, "Filesystem", "Size", "Used", "Available", "Use%")
	t.right = []bool{false, true, true, true, true}
	for _, item := range sh.expandAll(args) {
		if !item.exists() {
			sh.fail(errNotFound(item.text))
			continue
		}
		ns := item.ns
		if ns == "" {
			ns = sh.fs.Namespace()
		}
		sum, err := sh.fs.ContentSummary(sh.ctx, uriOf(item.ns, "/"))
		if err != nil {
			sh.fail(sh.explain(item.text, item.abs, err))
			continue
		}
		const capacity = math.MaxInt64
		used := sum.SpaceConsumed
		t.add("strata://"+ns, size(capacity), size(used), size(capacity-used),
			fmt.Sprintf("%.0f%%", float64(used)/capacity*100))
	}
	if !t.empty() {
		sh.printf("%s", t)
	}
	return nil
}

// runSetrep is -setrep [-R] [-w] <rep> <path> ..., Hadoop's SetReplication
// on a file system where replication means nothing: a namespace's blocks
// live once, in its bucket, which keeps them as it keeps any object. As
// S3A and Hadoop's own FileSystem do, each file takes the new factor
// without a change ("Replication N set: path", directories recursively),
// and -w has nothing to wait for.
func runSetrep(sh *shell, args []string) error {
	cf := newFormat(2, unbounded, "R", "w")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	rep, err := strconv.ParseInt(args[0], 10, 16)
	if err != nil {
		sh.warn("Illegal replication, a positive integer expected")
		return usagef("For input string: \"%s\"", args[0])
	}
	if rep < 1 {
		return usagef("replication must be >= 1")
	}
	if err := sh.connect(); err != nil {
		return err
	}
	var set []*pathData
	for _, item := range sh.expandAll(args[1:]) {
		if !item.exists() {
			sh.fail(errNotFound(item.text))
			continue
		}
		sh.walk(item, true, func(it *pathData) error {
			if !it.isDir() {
				sh.printf("Replication %d set: %s\n", rep, it.text)
				set = append(set, it)
			}
			return nil
		})
	}
	if cf.opt("w") {
		for _, it := range set {
			sh.printf("Waiting for %s ... done\n", it.text)
		}
	}
	return nil
}
