package procgroup

import (
	"bytes"
	"errors"
	"os/exec"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the copying goroutine of exec.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// A process's stdout and stderr reach out, all of it once it has exited.
func TestProcessOutput(t *testing.T) {
	var out syncBuffer
	p, err := StartProcess("/bin/sh", []string{"-c", "echo out; echo err >&2"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := out.b.String(); got != "out\nerr\n" {
		t.Fatalf("output %q", got)
	}
}

// Kill and Stop end a process with their signal and return once it is
// dead, and again at once.
func TestProcessKillStop(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*Process)
		want string
	}{
		{"Kill", (*Process).Kill, "signal: killed"},
		{"Stop", (*Process).Stop, "signal: terminated"},
	} {
		p, err := StartProcess("/bin/sh", []string{"-c", "exec sleep 60"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tc.end(p)
		tc.end(p)
		var exit *exec.ExitError
		if err := p.Wait(); !errors.As(err, &exit) || exit.String() != tc.want {
			t.Errorf("Wait after %s: %v, want %s", tc.name, err, tc.want)
		}
	}
}
