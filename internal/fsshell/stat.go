package fsshell

import (
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/client"
)

// runStat is -stat [format] <path> ...: formatStat for each path (and,
// with -R, everything below it).
func runStat(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "R")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	format := "%y"
	if strings.Contains(args[0], "%") {
		format = args[0]
		if args, err = cf.parse(args[1:]); err != nil { // a path must remain
			return err
		}
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		if !item.exists() {
			sh.fail(errNotFound(item.text))
			continue
		}
		sh.walk(item, cf.opt("R"), func(p *pathData) error {
			sh.printf("%s\n", formatStat(format, p.name(), p.st))
			return nil
		})
	}
	return nil
}

// runTest is -test -[defswrz] <path>: no output, the answer is the exit
// status (1 for false, and for a path that does not exist).
func runTest(sh *shell, args []string) error {
	cf := newFormat(1, 1, "e", "d", "f", "s", "z", "w", "r")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	flags := cf.set()
	switch {
	case len(flags) == 0:
		return usagef("No test flag given")
	case len(flags) > 1:
		return usagef("Only one test flag is allowed")
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		if !item.exists() || !sh.test(flags[0], item.st) {
			sh.exitCode = exitError
		}
	}
	return nil
}

func (sh *shell) test(flag string, st *client.FileStatus) bool {
	switch flag {
	case "d":
		return st.IsDir
	case "f":
		return !st.IsDir
	case "s":
		return st.Length > 0
	case "z":
		return st.Length == 0
	case "r":
		return sh.permits(st, 4)
	case "w":
		return sh.permits(st, 2)
	}
	return true // -e
}

// permits judges access from the mode bits as the service does for a user
// who is not a superuser: the owner's bits, else the group's, else others'.
// NB: the service has no access check to ask (HDFS's checkAccess), and the
// client does not know who its superusers are.
func (sh *shell) permits(st *client.FileStatus, bit uint32) bool {
	perm := st.Perm
	switch {
	case st.Owner == sh.user():
		perm >>= 6
	case slices.Contains(sh.fs.Groups(), st.Group):
		perm >>= 3
	}
	return perm&bit != 0
}
