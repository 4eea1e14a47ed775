package fsshell

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/client"
)

// runOffline runs a command line with a client that can reach no service:
// what it prints must not need one.
func runOffline(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb, func() (*client.Client, error) {
		return nil, errors.New("no service in this test")
	})
	return out.String(), errb.String(), code
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestHelpAndUsage(t *testing.T) {
	out, errs, code := runOffline(t, "-help", "mkdir", "-rmdir")
	want := "-mkdir [-p] <path> ... :\n  Create a directory in specified location.\n\n" +
		"  -p  Do not fail if the directory already exists, and create missing parents.\n" +
		"-rmdir [--ignore-fail-on-non-empty] <dir> ... :\n" +
		"  Removes the directory entry specified by each directory argument, provided it is\n  empty.\n"
	if out != want || errs != "" || code != 0 {
		t.Fatalf("-help: code %d stderr %q stdout\n%s", code, errs, out)
	}
	out, _, code = runOffline(t, "-usage", "mkdir")
	if out != "Usage: strata fs [generic options] -mkdir [-p] <path> ...\n" || code != 0 {
		t.Fatalf("-usage mkdir: %d %q", code, out)
	}
	out, _, code = runOffline(t, "-help")
	for _, c := range sortedCommands() {
		if !strings.Contains(out, "\t["+c.usageLine()+"]\n") || !strings.Contains(out, "\n"+c.usageLine()+" :\n  ") {
			t.Errorf("-help lacks -%s", c.name)
		}
	}
	if code != 0 || !strings.HasPrefix(out, "Usage: strata fs [generic options]\n\t[-appendToFile") ||
		!strings.HasSuffix(out, "for a usage error or an unknown command.\n") {
		t.Fatalf("-help: %d\n%s", code, out)
	}
	if !strings.Contains(out, "/user/<user>/.Trash/Current") {
		t.Error("-help rm does not say where the trash is")
	}
}

// Usage errors print FsShell's way: the message after the command as typed,
// all the usages, then the command's own; the status is 255 (Java's -1).
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args      []string
		first     string
		instUsage bool
	}{
		{nil, "Usage: strata fs [generic options]", false},
		{[]string{"-foo"}, "-foo: Unknown command", false},
		{[]string{"ls", "/"}, "ls: Unknown command", false},
		{[]string{"-ls", "-Z"}, "-ls: Illegal option -Z", true},
		{[]string{"-ls", "-Rh", "/"}, "-ls: Illegal option -Rh", true},
		{[]string{"-mkdir"}, "-mkdir: Not enough arguments: expected 1 but got 0", true},
		{[]string{"-mv", "/a"}, "-mv: Not enough arguments: expected 2 but got 1", true},
		{[]string{"-test", "/a"}, "-test: No test flag given", true},
		{[]string{"-test", "-d", "-e", "/a"}, "-test: Only one test flag is allowed", true},
		{[]string{"-test", "-d", "/a", "/b"}, "-test: Too many arguments: expected 1 but got 2", true},
		{[]string{"-stat", "%y"}, "-stat: Not enough arguments: expected 1 but got 0", true},
		{[]string{"-chmod", "xyz", "/a"}, "-chmod: chmod : mode 'xyz' does not match the expected pattern.", true},
		{[]string{"-chown", "a:b:c", "/a"}, "-chown: 'a:b:c' does not match expected pattern for [owner][:group].", true},
		{[]string{"-chown", ":", "/a"}, "-chown: ':' does not specify owner or group.", true},
		{[]string{"-chgrp", "a:b", "/a"}, "-chgrp: 'a:b' does not match expected pattern for group", true},
		{[]string{"-touch", "-t", "yesterday", "/a"}, "-touch: Unable to parse the specified timestamp yesterday", true},
		{[]string{"-touch", "/a", "-t"}, "-touch: option -t requires 1 argument.", true},
		{[]string{"-help", "nope"}, "-help: `nope': Unknown command", true},
		{[]string{"-cp", "/a"}, "-cp: Not enough arguments: expected 2 but got 1", true},
		{[]string{"-cp", "-R", "/a", "/b"}, "-cp: Illegal option -R", true},
		{[]string{"-cp", "-ptq", "/a", "/b"}, "-cp: No attribute for q", true},
		{[]string{"-tail", "-F", "/a"}, "-tail: Illegal option -F", true},
		{[]string{"-tail", "-f", "-s", "x", "/a"}, `-tail: For input string: "x"`, true},
	} {
		out, errs, code := runOffline(t, c.args...)
		if code != 255 || out != "" || strings.Split(errs, "\n")[0] != c.first {
			t.Errorf("%q: code %d, stdout %q, stderr first line %q, want %q", c.args, code, out, strings.Split(errs, "\n")[0], c.first)
			continue
		}
		if !strings.Contains(errs, "Usage: strata fs [generic options]\n\t[-appendToFile") {
			t.Errorf("%q: no usage list", c.args)
		}
		if inst := strings.HasPrefix(lastLine(errs), "Usage: strata fs [generic options] -"); inst != c.instUsage {
			t.Errorf("%q: last line %q", c.args, lastLine(errs))
		}
	}
	_, errs, _ := runOffline(t, "ls", "/")
	if !strings.Contains(errs, "ls: Unknown command\nDid you mean -ls?  This command begins with a dash.\n") {
		t.Errorf("no hint for a missing dash:\n%s", errs)
	}
}

func TestNoServiceIsAPathError(t *testing.T) {
	_, errs, code := runOffline(t, "-ls", "/")
	if code != 1 || errs != "ls: no service in this test\n" {
		t.Fatalf("code %d stderr %q", code, errs)
	}
	_, errs, code = runOffline(t, "-appendToFile", "/x")
	if code != 1 || errs != "appendToFile: missing destination argument\n" {
		t.Fatalf("code %d stderr %q", code, errs)
	}
}

// An empty path is a usage error, found before any call to the service.
func TestEmptyPathIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"-rm", "", "/x"}, {"-ls", "", "/x"}, {"-mv", "/x", ""}} {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, &out, &errb, func() (*client.Client, error) {
			return client.New(client.Config{Meta: "127.0.0.1:1", User: "alice"}) // never dialled
		})
		if code != 255 || !strings.HasPrefix(errb.String(), args[0]+": Can not create a Path from an empty string\n") {
			t.Errorf("%q: code %d stderr %q", args, code, errb.String())
		}
	}
}

func TestHelpCpAndTail(t *testing.T) {
	out, errs, code := runOffline(t, "-usage", "cp", "tail")
	want := "Usage: strata fs [generic options] -cp [-f] [-p | -p[topax]] [-d] <src> ... <dst>\n" +
		"Usage: strata fs [generic options] -tail [-f] [-s <sleep interval>] <file>\n"
	if out != want || errs != "" || code != 0 {
		t.Fatalf("-usage: %d %q\n%s", code, errs, out)
	}
	out, _, _ = runOffline(t, "-help", "tail")
	if !strings.HasPrefix(out, "-tail [-f] [-s <sleep interval>] <file> :\n  Show the last 1KB of the file.\n\n  -f  Shows appended data") {
		t.Fatalf("-help tail:\n%s", out)
	}
	out, _, _ = runOffline(t, "-help", "cp")
	if !strings.HasPrefix(out, "-cp [-f] [-p | -p[topax]] [-d] <src> ... <dst> :\n  Copy files that match the file pattern <src> to a destination.") ||
		!strings.Contains(out, "  -f         Overwrite the destination if it already exists.\n") {
		t.Fatalf("-help cp:\n%s", out)
	}
	for _, cmd := range []string{"cp", "put", "copyFromLocal", "get", "copyToLocal"} {
		if out, _, _ := runOffline(t, "-help", cmd); !strings.Contains(out, noProgressEnv) {
			t.Errorf("-help %s does not say how to turn the progress bar off", cmd)
		}
	}
	if out, _, _ := runOffline(t, "-help", "put"); strings.Contains(out, "data path") {
		t.Error("-help put still says the data path is missing")
	}
}
