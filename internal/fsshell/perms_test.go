package fsshell

import "testing"

// The expectations follow Hadoop's ChmodParser (TestFsShellPermission).
func TestChmodModes(t *testing.T) {
	for _, c := range []struct {
		mode     string
		existing uint32
		dir      bool
		want     uint32
	}{
		{"755", 0o644, false, 0o755},
		{"0640", 0o1777, true, 0o640},
		{"1777", 0o755, true, 0o1777},
		{"644", 0o1755, true, 0o1644}, // three digits leave the sticky bit
		{"u+x", 0o644, false, 0o744},
		{"u+x,g-w", 0o664, false, 0o744},
		{"go-rwx", 0o755, false, 0o700},
		{"a=r", 0o777, false, 0o444},
		{"=rw", 0o000, false, 0o666},
		{"+rwx", 0o000, false, 0o777},
		{"o=", 0o777, false, 0o770},
		{"u+r,u+w", 0o000, false, 0o200}, // a later clause replaces an earlier one
		{"a+X", 0o644, false, 0o644},     // X: no execute bit, not a directory
		{"a+X", 0o744, false, 0o755},
		{"a+X", 0o600, true, 0o711},
		{"+t", 0o777, true, 0o1777},
		{"o-t", 0o1777, true, 0o777},
		{"u+t", 0o777, true, 0o777}, // sticky only through o or a
		{" g+w , o+w ", 0o644, false, 0o666},
		{"ug=rwx,o=", 0o000, false, 0o770},
		{"u-+x", 0o644, false, 0o744}, // several operators: the last counts
	} {
		m, err := parseMode(c.mode)
		if err != nil {
			t.Errorf("parseMode(%q): %v", c.mode, err)
			continue
		}
		if got := m.apply(c.existing, c.dir); got != c.want {
			t.Errorf("%q on %o (dir %v) = %o, want %o", c.mode, c.existing, c.dir, got, c.want)
		}
	}
}

func TestChmodBadModes(t *testing.T) {
	for _, mode := range []string{"xyz", "+755", "8777", "77", "u+x g+w", "u+y", "", "12345", "2755", "u-w+x"} {
		if _, err := parseMode(mode); err == nil {
			t.Errorf("parseMode(%q) accepted", mode)
		}
	}
}

func TestChownSpecs(t *testing.T) {
	for spec, want := range map[string][2]string{
		"alice": {"alice", ""}, "alice:staff": {"alice", "staff"}, ":staff": {"", "staff"},
		"alice:": {"alice", ""}, " u.name@REALM ": {"u.name@REALM", ""},
	} {
		sm := chownSpec.FindStringSubmatch(spec)
		if sm == nil || sm[1] != want[0] || sm[3] != want[1] {
			t.Errorf("chown %q: %q", spec, sm)
		}
	}
	for _, bad := range []string{"a b", "al!ce", "a:b:c"} {
		if chownSpec.MatchString(bad) {
			t.Errorf("chown %q accepted", bad)
		}
	}
}
