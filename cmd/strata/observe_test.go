package main_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/trace"
)

// logLines parses a process's stderr's JSON lines (others are the plain
// announcements); it fails the test on a line that starts as JSON and is
// not.
func logLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not JSON: %v\n%s", err, line)
		}
		out = append(out, m)
	}
	return out
}

// With --log-format json every log line is a JSON object, and a file's
// write is followed by its trace id through the service and the worker:
// the service logs its create and complete as slow calls with the trace
// id the client gave, and the worker the block's write with the same id.
// A trace id no log line could show as it is is refused.
func TestTraceIDsFollowACallThroughTheLogs(t *testing.T) {
	ctx := testContext(t)
	dev := testcluster.StartDev(t, t.TempDir(), "--log-format", "json", "--slow-call", "1us")
	c := testcluster.Client(t, dev.Addr, "")
	id := "op-" + trace.New()
	err := c.WriteFile(trace.NewContext(ctx, id), "/traced/file", make([]byte, 64<<10), client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"Create": false, "Complete": false, "worker": false}
	eventually(ctx, t, "the call's trace id in the service's and the worker's logs", func() bool {
		for _, l := range logLines(t, dev.Stderr()) {
			if l["trace"] != id {
				continue
			}
			switch m, _ := l["method"].(string); {
			case m == "Create" || m == "Complete":
				want[m] = true
			case m == "Write" || strings.HasPrefix(l["msg"].(string), "slow short-circuit"):
				want["worker"] = true
			}
		}
		return want["Create"] && want["Complete"] && want["worker"]
	})
	if len(logLines(t, dev.Stderr())) == 0 {
		t.Fatal("no JSON log lines")
	}
	for _, bad := range []string{"has space", strings.Repeat("x", trace.MaxLen+1), "new\nline"} {
		_, err := c.Stat(trace.NewContext(ctx, bad), "/traced/file")
		if !errors.Is(err, fserr.ErrInvalidArgument) {
			t.Errorf("a call with trace id %q: %v, want invalid argument", bad, err)
		}
	}
}

// The flags of the logs are checked before anything starts.
func TestLogFlags(t *testing.T) {
	ctx := testContext(t)
	for _, args := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}, {"--slow-call", "0s"}} {
		r := strataCLI(ctx, t, append([]string{"meta", "--data-dir", t.TempDir() + "/d"}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, args[0]) {
			t.Errorf("meta %v: exit %d, %q; want 2 naming the flag", args, r.code, r.stderr)
		}
	}
}
