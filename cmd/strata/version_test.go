package main

import (
	"strings"
	"testing"
)

// The revision "make build" links in is what the version says.
func TestVersionSaysTheLinkedRevision(t *testing.T) {
	for linked, want := range map[string]string{
		"0123abcd":          "revision: 0123abcd\n",
		"0123abcd-modified": "revision: 0123abcd (with changes not committed)\n",
		"-modified":         "revision: unknown (built without version control information)\n",
	} {
		if got := readStamp(linked).String(); !strings.Contains(got, "\n"+want) || !strings.HasPrefix(got, "strata ") {
			t.Errorf("linked %q: got\n%swant a line %q", linked, got, want)
		}
	}
}
