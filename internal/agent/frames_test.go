package agent

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
)

var update = flag.Bool("update", false, "rewrite testdata/frames.txt's answers from the agent's code")

const framesFile = "testdata/frames.txt"

// requests are the frames the Python package sends, as it sends them
// (python/tests/test_wire.py encodes the same), and what the agent reads.
var requests = map[string]request{
	"request-hello": {Op: "hello"},
	"request-stat":  {Op: "stat", Path: "strata://default/a/b"},
	"request-read":  {Op: "read", H: 7, Off: 4 << 20, Len: 64 << 10, Shm: 0, Seq: true},
}

// answers are the frames the agent writes (python/tests/test_wire.py
// decodes them: fields, or the exceptions).
func answers() map[string][]byte {
	mtime := time.UnixMilli(1795919384116)
	st := &client.FileStatus{Path: "/a/b", Name: "b", Length: 5, Perm: 0o644, Owner: "alice", Group: "staff",
		ModTime: mtime, AccTime: mtime, Replication: 1, BlockSize: 64 << 20, InodeID: 42}
	return map[string][]byte{
		"answer-stat":      answerFrame(answer{"status": statusOf(st)}),
		"answer-not-found": errorFrame(fserr.Errorf(fserr.ErrNotFound, "stat /a/b: no such file or directory")),
		"answer-unavailable": errorFrame(&rpcerr.TransportError{Code: codes.Unavailable,
			Msg: "cannot reach the namespace service at 127.0.0.1:1: connection refused"}),
	}
}

// TestFrames: the agent reads the Python package's requests as meant, and
// writes its answers byte for byte as testdata/frames.txt holds them.
func TestFrames(t *testing.T) {
	names, frames := readFrames(t)
	for name, want := range requests {
		frame, ok := frames[name]
		if !ok {
			t.Fatalf("%s: no %s", framesFile, name)
		}
		body, err := readFrame(bytes.NewReader(frame), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got request
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read %+v, want %+v", name, got, want)
		}
	}
	for name, frame := range answers() {
		if *update {
			frames[name] = frame
			continue
		}
		if !bytes.Equal(frames[name], frame) {
			t.Errorf("%s: the agent writes\n%x\nthe file holds\n%x\n(-update rewrites it)", name, frame, frames[name])
		}
	}
	if *update {
		writeFrames(t, names, frames)
	}
}

func readFrames(t testing.TB) ([]string, map[string][]byte) {
	f, err := os.Open(framesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	frames := map[string][]byte{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hx, ok := strings.Cut(line, ": ")
		b, err := hex.DecodeString(hx)
		if !ok || err != nil {
			t.Fatalf("%s: a line that is not NAME: HEX: %q", framesFile, line)
		}
		names = append(names, name)
		frames[name] = b
	}
	return names, frames
}

func writeFrames(t *testing.T, names []string, frames map[string][]byte) {
	old, err := os.ReadFile(framesFile)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		if name, _, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, "#") {
			fmt.Fprintf(&out, "%s: %x\n", name, frames[name])
			continue
		}
		out.WriteString(line + "\n")
	}
	if err := os.WriteFile(framesFile, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = names
}

// FuzzRequests: whatever bytes a caller sends, the framing and the request
// decoding end in a request, an error answer or a closed connection, never a
// panic, and no frame past MaxRequest is read.
func FuzzRequests(f *testing.F) {
	_, frames := readFrames(f)
	for _, b := range frames {
		f.Add(b)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			body, err := readFrame(r, nil)
			if err != nil {
				return
			}
			if len(body) > MaxRequest {
				t.Fatalf("a frame of %d bytes was read", len(body))
			}
			var req request
			_ = json.Unmarshal(body, &req)
		}
	})
}
