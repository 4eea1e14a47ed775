package fsshell

import (
	"slices"
	"testing"
)

func TestCompileGlob(t *testing.T) {
	for _, c := range []struct {
		glob    string
		wild    bool
		match   []string
		nomatch []string
	}{
		{"*.txt", true, []string{"a.txt", ".txt", ".hidden.txt"}, []string{"a.txt2", "atxt"}},
		{"?", true, []string{"a", "é"}, []string{"", "ab"}},
		{"[ab]c", true, []string{"ac", "bc"}, []string{"cc"}},
		{"[!ab]c", true, []string{"cc"}, []string{"ac"}},
		{"[^ab]c", true, []string{"cc"}, []string{"bc"}},
		{"[a-c]*", true, []string{"b1"}, []string{"d"}},
		{"{x,y}z", true, []string{"xz", "yz"}, []string{"z", "x,yz"}},
		{"{a,{b,c}d}", true, []string{"a", "bd", "cd"}, []string{"b"}},
		{"a.b(c)|d+$", false, []string{"a.b(c)|d+$"}, []string{"aXb(c)|d+$"}},
		{`\*`, false, []string{"*"}, []string{"x"}},
		{"plain,name}", false, []string{"plain,name}"}, nil},
	} {
		g, err := compileGlob(c.glob)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", c.glob, err)
			continue
		}
		if g.wild != c.wild {
			t.Errorf("%q wild = %v", c.glob, g.wild)
		}
		for _, s := range c.match {
			if !g.re.MatchString(s) {
				t.Errorf("%q does not match %q", c.glob, s)
			}
		}
		for _, s := range c.nomatch {
			if g.re.MatchString(s) {
				t.Errorf("%q matches %q", c.glob, s)
			}
		}
	}
	if g, _ := compileGlob(`a\*b`); g.literal != "a*b" {
		t.Errorf("literal %q", g.literal)
	}
	for glob, want := range map[string]string{
		"[ab":   "Illegal file pattern: Unclosed character class for glob [ab at 3",
		"{a,b":  "Illegal file pattern: Unclosed group for glob {a,b at 4",
		`a\`:    `Illegal file pattern: Missing escaped character for glob a\ at 2`,
		"[a[b]": "Illegal file pattern: Unclosed character class for glob [a[b] at 2",
	} {
		if _, err := compileGlob(glob); err == nil || err.Error() != want {
			t.Errorf("compileGlob(%q) = %v, want %q", glob, err, want)
		}
	}
}

func TestHasGlob(t *testing.T) {
	for p, want := range map[string]bool{"/a/b": false, "/a/*": true, "/a/\\*": false, "/{a,b}": true, "/a?": true, "/[x]": true} {
		if hasGlob(p) != want {
			t.Errorf("hasGlob(%q) = %v", p, !want)
		}
	}
}

func TestExpandBraces(t *testing.T) {
	for p, want := range map[string][]string{
		"/a/{b,c}":           {"/a/{b,c}"},
		"/{a/b,c}/d":         {"/a/b/d", "/c/d"},
		"/{a/{x,y},b}":       {"/a/{x,y}", "/b"},
		"/{p,q}/{r/s,t}":     {"/{p,q}/r/s", "/{p,q}/t"},
		"/x/{a,b/c}/{d/e,f}": {"/x/a/d/e", "/x/a/f", "/x/b/c/d/e", "/x/b/c/f"},
	} {
		if got := expandBraces(p); !slices.Equal(got, want) {
			t.Errorf("expandBraces(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestRelativize(t *testing.T) {
	for _, c := range []struct {
		cwd, p string
		dir    bool
		want   string
	}{
		{"/user/alice", "/user/alice", true, "."},
		{"/user/alice", "/user/alice/x", false, "x"},
		{"/user/alice", "/user/alice/d/e", true, "d/e"},
		{"/user/alice", "/user/bob/y", false, "../bob/y"},
		{"/user/alice", "/user", true, ".."},
		{"/user/alice", "/tmp/z", false, "../../tmp/z"},
		{"/user/alice", "/", true, "../.."},
	} {
		if got := relativize(c.cwd, c.p, c.dir); got != c.want {
			t.Errorf("relativize(%q, %q) = %q, want %q", c.cwd, c.p, got, c.want)
		}
	}
}
