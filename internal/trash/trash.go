// Package trash holds the rules of a user's trash, those of HDFS's
// TrashPolicyDefault: where the trash is, where a deleted path goes in it,
// how checkpoints are named, and which of them an emptier removes. It does
// no I/O: `strata fs -rm` and `-expunge` act on them through the client,
// and the namespace service's leader empties every user's trash.
//
// A user's trash is /user/<user>/.Trash in each namespace. -rm moves a path
// to .Trash/Current/<its absolute path>. Every checkpoint interval the
// emptier renames Current to a checkpoint named by the time
// (yyMMddHHmmss, UTC; "-1", "-2"... when that name is taken) and deletes
// the checkpoints older than the trash interval.
package trash

import (
	"path"
	"strconv"
	"strings"
	"time"
)

// The names in a trash.
const (
	Dir     = ".Trash"
	Current = "Current"
	// Home is the directory of users' home directories.
	Home = "/user"
)

// Root returns user's trash directory, /user/<user>/.Trash.
func Root(user string) string { return path.Join(Home, user, Dir) }

// Within reports whether absolute path p is in user's trash, or is it.
func Within(p, user string) bool { return under(p, Root(user)) }

// Contains reports whether deleting absolute path p would delete user's
// trash with it: p is /user/<user> or one of its ancestors.
func Contains(p, user string) bool { return under(path.Join(Home, user), p) }

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Target returns where absolute path p goes in user's trash.
func Target(user, p string) string { return path.Join(Root(user), Current, p) }

// checkpointFormat is HDFS's CHECKPOINT format, yyMMddHHmmss.
const checkpointFormat = "060102150405"

// CheckpointName names the checkpoint made at t; attempt n > 0 gives the
// name to use when the first n are taken.
func CheckpointName(t time.Time, n int) string {
	name := t.UTC().Format(checkpointFormat)
	if n > 0 {
		name += "-" + strconv.Itoa(n)
	}
	return name
}

// CheckpointTime returns the time of the checkpoint called name, and
// whether name is a checkpoint's.
func CheckpointTime(name string) (time.Time, bool) {
	stamp, suffix, found := strings.Cut(name, "-")
	if found {
		if n, err := strconv.Atoi(suffix); err != nil || n <= 0 {
			return time.Time{}, false
		}
	}
	t, err := time.ParseInLocation(checkpointFormat, stamp, time.UTC)
	return t, err == nil
}

// Expired returns those of names, the entries of a trash directory, that
// are checkpoints made more than interval before now. Current and names
// that are no checkpoint's are never expired.
func Expired(names []string, now time.Time, interval time.Duration) []string {
	var out []string
	for _, name := range names {
		if t, ok := CheckpointTime(name); ok && now.Sub(t) > interval {
			out = append(out, name)
		}
	}
	return out
}
