package namespace_test

import (
	"errors"
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
		// Names from elsewhere stay reachable; new ones are checked before
		// a command is proposed (internal/metaserver).
		{"/a:b/nl\nx", []string{"a:b", "nl\nx"}, true},
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
		{"/bad\xffname", nil, false},
		{"/" + long + "n", nil, false},
		{deep + "/d", nil, false},
		{longest + "h", nil, false},
	} {
		got, err := namespace.SplitPath(tc.path)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, namespace.ErrInvalidPath) {
			t.Errorf("SplitPath(%.30q): %v, want ok=%v", tc.path, err, tc.ok)
			continue
		}
		if tc.ok && tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("SplitPath(%.30q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
