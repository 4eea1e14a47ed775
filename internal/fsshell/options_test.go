package fsshell

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestCmdFormat(t *testing.T) {
	for _, c := range []struct {
		name     string
		min, max int
		opts     []string
		args     []string
		rest     []string
		set      []string
		err      string
	}{
		{"options then paths", 0, unbounded, []string{"R", "h"}, []string{"-R", "-h", "/a", "-b"}, []string{"/a", "-b"}, []string{"R", "h"}, ""},
		{"combined letters are not split", 0, unbounded, []string{"R", "h"}, []string{"-Rh", "/a"}, nil, nil, "Illegal option -Rh"},
		{"unknown option", 1, unbounded, []string{"p"}, []string{"-x", "/a"}, nil, nil, "Illegal option -x"},
		{"dash is an argument", 1, unbounded, []string{"f"}, []string{"-f", "-", "/dst"}, []string{"-", "/dst"}, []string{"f"}, ""},
		{"double dash ends options", 1, unbounded, []string{"f"}, []string{"--", "-f"}, []string{"-f"}, nil, ""},
		{"too few", 1, unbounded, []string{"p"}, []string{"-p"}, nil, nil, "Not enough arguments: expected 1 but got 0"},
		{"too many", 1, 1, []string{"e"}, []string{"-e", "/a", "/b"}, nil, nil, "Too many arguments: expected 1 but got 2"},
		{"long option", 1, unbounded, []string{"-ignore-fail-on-non-empty"}, []string{"--ignore-fail-on-non-empty", "/d"}, []string{"/d"}, []string{"-ignore-fail-on-non-empty"}, ""},
		{"word option", 1, unbounded, []string{"skipTrash", "r"}, []string{"-skipTrash", "-r", "/d"}, []string{"/d"}, []string{"r", "skipTrash"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFormat(c.min, c.max, c.opts...)
			rest, err := f.parse(c.args)
			if c.err != "" {
				var ue *usageError
				if !errors.As(err, &ue) || ue.msg != c.err {
					t.Fatalf("err %v, want usage error %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(rest, c.rest) {
				t.Fatalf("rest %q err %v, want %q", rest, err, c.rest)
			}
			set := f.set()
			sort.Strings(set)
			if !slices.Equal(set, c.set) {
				t.Fatalf("set %q, want %q", set, c.set)
			}
		})
	}
}

// chmod's format keeps unknown options as arguments, so "-w" is a mode,
// and an option after it is still an option (CommandFormat's loop).
func TestCmdFormatIgnoreUnknown(t *testing.T) {
	f := newFormat(2, unbounded, "R")
	f.ignoreUnknown = true
	rest, err := f.parse([]string{"-w", "-R", "/a"})
	if err != nil || strings.Join(rest, " ") != "-w /a" || !f.opt("R") {
		t.Fatalf("rest %q R=%v err %v", rest, f.opt("R"), err)
	}
}

func TestPopOptionWithArgument(t *testing.T) {
	v, rest, ok, err := popOptionWithArgument("-t", []string{"-a", "-t", "20240102:150405", "/f"})
	if err != nil || !ok || v != "20240102:150405" || strings.Join(rest, " ") != "-a /f" {
		t.Fatalf("got %q %q %v %v", v, rest, ok, err)
	}
	if _, _, ok, _ := popOptionWithArgument("-t", []string{"--", "-t", "x"}); ok {
		t.Fatal("found an option after --")
	}
	if _, _, _, err := popOptionWithArgument("-t", []string{"/f", "-t"}); err == nil || err.Error() != "option -t requires 1 argument." {
		t.Fatalf("err %v", err)
	}
}

func TestParseOptions(t *testing.T) {
	o, rest, err := ParseOptions([]string{"--meta", "h:1", "--namespace=ns2", "-ls", "--meta", "x"})
	if err != nil || o.Meta != "h:1" || o.Namespace != "ns2" || strings.Join(rest, " ") != "-ls --meta x" {
		t.Fatalf("got %+v %q %v", o, rest, err)
	}
	if _, rest, _ := ParseOptions([]string{"--help", "ls"}); strings.Join(rest, " ") != "-help ls" {
		t.Fatalf("--help gave %q", rest)
	}
	if _, _, err := ParseOptions([]string{"--meta"}); err == nil {
		t.Fatal("--meta without a value was accepted")
	}
}
