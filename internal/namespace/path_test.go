package namespace_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/namespace"
)

func TestSplitPath(t *testing.T) {
	long := strings.Repeat("n", namespace.MaxNameLen)
	deep := strings.Repeat("/d", namespace.MaxDepth)
	// 8000 bytes exactly: 888 components of 8 bytes, then one of 7.
	longest := strings.Repeat("/abcdefgh", 888) + "/abcdefg"
	for _, tc := range []struct {
		path string
		want []string // nil with ok false: invalid
		ok   bool
	}{
		{"/", nil, true},
		{"//", nil, true}, // the root with its trailing slash
		{"/a", []string{"a"}, true},
		{"/a/", []string{"a"}, true},
		{"/a/b.c/..d/.e", []string{"a", "b.c", "..d", ".e"}, true},
		{"/ sp ace/ü/日本", []string{" sp ace", "ü", "日本"}, true},
		{"/" + long, []string{long}, true},
		{deep, slices.Repeat([]string{"d"}, namespace.MaxDepth), true},
		{longest, nil, true},
		{"", nil, false},
		{"a", nil, false},
		{"a/", nil, false},
		{"///", nil, false},
		{"//a", nil, false},
		{"/a//", nil, false},
		{"/a//b", nil, false},
		{"/.", nil, false},
		{"/./a", nil, false},
		{"/a/..", nil, false},
		{"/a/../b", nil, false},
		{"/a\x00", nil, false},
		{"/" + long + "n", nil, false},
		{deep + "/d", nil, false},
		{longest + "h", nil, false},
	} {
		got, err := namespace.SplitPath(tc.path)
		if tc.ok != (err == nil) || err != nil && err != namespace.ErrInvalidPath {
			t.Errorf("SplitPath(%.30q): %v, want ok=%v", tc.path, err, tc.ok)
			continue
		}
		if tc.ok && tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("SplitPath(%.30q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// validPath is SplitPath's contract, spelled out independently.
func validPath(p string) bool {
	if !strings.HasPrefix(p, "/") || len(p) > namespace.MaxPathLen {
		return false
	}
	if p == "/" || p == "//" {
		return true
	}
	p = strings.TrimSuffix(p[1:], "/")
	parts := strings.Split(p, "/")
	if len(parts) > namespace.MaxDepth {
		return false
	}
	for _, c := range parts {
		if c == "" || c == "." || c == ".." || len(c) > namespace.MaxNameLen || strings.IndexByte(c, 0) >= 0 {
			return false
		}
	}
	return true
}

func FuzzSplitPath(f *testing.F) {
	for _, p := range []string{"/", "//", "/a", "/a/", "/a/b/c", "a/b", "/a//b", "/./a", "/a/..", "/a\x00b",
		"/" + strings.Repeat("x", 256), strings.Repeat("/d", 1001)} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		parts, err := namespace.SplitPath(p)
		if want := validPath(p); (err == nil) != want {
			t.Fatalf("SplitPath(%q): %v, valid %v", p, err, want)
		}
		if err != nil {
			if err != namespace.ErrInvalidPath {
				t.Fatalf("SplitPath(%q): unexpected error %v", p, err)
			}
			return
		}
		for _, c := range parts {
			if !namespace.ValidName(c) {
				t.Fatalf("SplitPath(%q): invalid component %q", p, c)
			}
		}
		joined := namespace.JoinPath(parts)
		if joined != p && joined+"/" != p {
			t.Fatalf("JoinPath(SplitPath(%q)) = %q", p, joined)
		}
		again, err := namespace.SplitPath(joined)
		if err != nil || !slices.Equal(again, parts) {
			t.Fatalf("SplitPath(%q) = %q, %v; want %q", joined, again, err, parts)
		}
	})
}
