package main

import (
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// `strata admin quota set|clear` against a real server: -count -q shows
// what it set, in FsShell's format; a create past the name quota is
// refused with HDFS's message; a user who is not the superuser may not set
// one; bad values are usage errors; clear takes the quotas off.
func TestAdminQuota(t *testing.T) {
	meta := testcluster.StartDev(t, t.TempDir()).Addr
	env := []string{"STRATA_META=" + meta}
	run := func(env []string, args ...string) ran { return strata(t, 30*time.Second, env, nil, args...) }
	run(env, "fs", "-mkdir", "-p", "/q/a").expect(t, 0, "")
	run(env, "admin", "quota", "set", "--names", "3", "--space", "1k", "/q").expect(t, 0, "")
	count := func(want string) {
		t.Helper()
		if r := run(env, "fs", "-count", "-q", "/q"); r.code != 0 || r.out != want {
			t.Errorf("-count -q /q: exit %d\n%q\nwant\n%q", r.code, r.out, want)
		}
	}
	count("           3               1            1024            1024            2            0                  0 /q\n")
	run(env, "fs", "-touchz", "/q/f").expect(t, 0, "")
	run(env, "fs", "-touchz", "/q/g").expect(t, 1,
		"touchz: The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=4\n")
	run(env, "admin", "quota", "clear", "--names", "/q").expect(t, 0, "")
	count("        none             inf            1024            1024            2            1                  0 /q\n")

	alice := append(env, "STRATA_TOKEN="+testcluster.Token(t, meta, "alice"))
	run(alice, "admin", "quota", "set", "--names", "10", "/q").expect(t, 1,
		"quota: setQuota /q: Access denied for user alice. Superuser privilege is required\nstrata: some quotas were not set\n")
	run(env, "admin", "quota", "set", "--names", "0", "/q").expect(t, 2,
		"strata: --names \"0\": a quota is a number of names, at least 1\n")
	run(env, "admin", "quota", "set", "/q").expect(t, 2, "strata: give --names, --space or both\n")
	run(env, "admin", "quota", "clear", "/q").expect(t, 0, "")
	count("        none             inf            none             inf            2            1                  0 /q\n")
}
