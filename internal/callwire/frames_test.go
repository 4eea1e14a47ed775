package callwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	_ "google.golang.org/genproto/googleapis/rpc/errdetails" // ErrorInfo, for the statuses' details
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/stratafs/strata/proto/strata/v1" // the messages the cases name
)

var update = flag.Bool("update", false, "rewrite the bytes of testdata/frames.txt from Go's encoders")

// framesFile holds the frames that the Go and the Java implementations must
// both encode and decode byte for byte (its header says how).
const framesFile = "testdata/frames.txt"

// frameCase is one case of framesFile.
type frameCase struct {
	kind, name string
	keys       map[string]string
	head       []string // its lines up to "----", as written
	body       []string // its lines of bytes, as written
	hex        string   // its bytes, white space removed
}

// Every case of framesFile: Go encodes each description to its bytes and
// decodes the bytes back to it, and refuses the malformed ones. With
// -update, the bytes are rewritten from what Go encodes.
func TestFrames(t *testing.T) {
	cases := readFrameCases(t)
	for i := range cases {
		c := &cases[i]
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			got, fields := encodeCase(t, c)
			if *update && fields != nil {
				c.hex, c.body = hex.EncodeToString(got), fields
			} else if got != nil && hex.EncodeToString(got) != c.hex {
				t.Fatalf("Go encodes\n%x\nthe file has\n%s", got, c.hex)
			}
			decodeCase(t, c)
		})
	}
	if *update {
		writeFrameCases(t, cases)
	}
}

// encodeCase returns the bytes Go's encoders make of c's description and
// the hex of each of the frame's fields (nil for a case with no bytes to
// make).
func encodeCase(t *testing.T, c *frameCase) ([]byte, []string) {
	switch c.kind {
	case "limits":
		want := fmt.Sprint(MaxMessage, " ", MaxFrame)
		if got := c.keys["max_message"] + " " + c.keys["max_frame"]; got != want {
			t.Fatalf("the file's limits are %s, Go's %s", got, want)
		}
		return nil, nil
	case "hello":
		b := appendHello([]byte(c.keys["preface"]), c.keys["token"])
		return b, splitHex(b, prefaceLen, 4)
	case "request":
		msg := marshal(t, c)
		b := appendRequest(nil, c.keys["method"], uint64(atoi(t, c.keys["timeout_ns"])), msg)
		return b, splitHex(b, 4, 1, len(c.keys["method"]), 8)
	case "response":
		b := encodeResponse(t, c)
		return b, splitHex(b, 4, 1)
	}
	return nil, nil
}

// encodeResponse returns the frame the server answers with: a call whose
// handler returns c's message, or fails with c's status.
func encodeResponse(t *testing.T, c *frameCase) []byte {
	m := message(t, c)
	handler := func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
		if c.keys["kind"] == "status" {
			return nil, status.ErrorProto(m.(*spb.Status))
		}
		return m, nil
	}
	desc := &grpc.ServiceDesc{ServiceName: "frames", Methods: []grpc.MethodDesc{{MethodName: "Answer", Handler: handler}}}
	s := NewServer(desc, nil, nil, nil)
	return s.call(context.Background(), request{method: "/frames/Answer"}, nil)
}

// decodeCase decodes c's bytes with Go's decoders and checks what they give
// against c's description, or that they refuse the bytes of a malformed
// case.
func decodeCase(t *testing.T, c *frameCase) {
	b, err := hex.DecodeString(c.hex)
	if err != nil {
		t.Fatal(err)
	}
	switch c.kind {
	case "hello":
		decodeHello(t, c, b)
	case "request":
		f, err := readFrame(bytes.NewReader(b), nil, MaxFrame)
		req, err2 := parseRequest(f)
		if err != nil || err2 != nil {
			t.Fatalf("a request refused: %v %v", err, err2)
		}
		if req.method != c.keys["method"] || fmt.Sprint(req.timeout) != c.keys["timeout_ns"] {
			t.Fatalf("decoded %s, timeout %d", req.method, req.timeout)
		}
		sameMessage(t, c, req.message)
	case "response":
		kind, body := decodeResponse(t, b)
		if want := map[string]byte{"message": kindMessage, "status": kindStatus}[c.keys["kind"]]; kind != want {
			t.Fatalf("decoded kind %d, want %d", kind, want)
		}
		sameMessage(t, c, body)
	case "bad-request":
		f, err := readFrame(bytes.NewReader(b), nil, MaxFrame)
		if err == nil {
			_, err = parseRequest(f)
		}
		if err == nil {
			t.Fatal("a malformed request was taken")
		}
	case "bad-response":
		decodeBadResponse(t, b)
	}
}

// decodeHello reads a connection's opening as the server does: the
// preface, then the hello frame.
func decodeHello(t *testing.T, c *frameCase, b []byte) {
	if len(b) < prefaceLen || string(b[:prefaceLen]) != c.keys["preface"] {
		t.Fatalf("the preface of %x is not %s", b, c.keys["preface"])
	}
	hello, err := readFrame(bytes.NewReader(b[prefaceLen:]), nil, maxHello)
	if err != nil || string(hello) != c.keys["token"] {
		t.Fatalf("the hello: %q %v, want %q", hello, err, c.keys["token"])
	}
}

// decodeResponse reads a response frame as the client does.
func decodeResponse(t *testing.T, b []byte) (byte, []byte) {
	f, err := readFrame(bytes.NewReader(b), nil, MaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	kind, body, err := parseResponse(f)
	if err != nil {
		t.Fatal(err)
	}
	return kind, body
}

// decodeBadResponse checks that the client refuses b: its frame, or a
// status in it that does not parse (Conn.invoke).
func decodeBadResponse(t *testing.T, b []byte) {
	f, err := readFrame(bytes.NewReader(b), nil, MaxFrame)
	if err != nil {
		return
	}
	kind, body, err := parseResponse(f)
	if err != nil {
		return
	}
	if kind == kindStatus && proto.Unmarshal(body, &spb.Status{}) != nil {
		return
	}
	t.Fatalf("a malformed response was taken: kind %d, %x", kind, body)
}

// sameMessage checks that b decodes to c's message.
func sameMessage(t *testing.T, c *frameCase, b []byte) {
	want := message(t, c)
	got := want.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(b, got); err != nil || !proto.Equal(got, want) {
		t.Fatalf("decoded %v (%v), want %v", got, err, want)
	}
}

// message returns c's message: "TYPE TEXT", its full name and its text.
func message(t *testing.T, c *frameCase) proto.Message {
	name, text, _ := strings.Cut(c.keys["message"], " ")
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatalf("message %q: %v", name, err)
	}
	m := mt.New().Interface()
	if err := prototext.Unmarshal([]byte(text), m); err != nil {
		t.Fatalf("message %s %s: %v", name, text, err)
	}
	return m
}

func marshal(t *testing.T, c *frameCase) []byte {
	b, err := proto.Marshal(message(t, c))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func atoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// splitHex is b in hex, a line per field: the fields of the sizes given,
// then the rest, split every 64 bytes.
func splitHex(b []byte, sizes ...int) []string {
	var out []string
	for _, n := range sizes {
		out = append(out, hex.EncodeToString(b[:n]))
		b = b[n:]
	}
	for len(b) > 0 {
		n := min(len(b), 64)
		out = append(out, hex.EncodeToString(b[:n]))
		b = b[n:]
	}
	return out
}

// readFrameCases parses framesFile; the lines before the first case are
// its header, kept as the first case's head by writeFrameCases.
func readFrameCases(t *testing.T) []frameCase {
	f, err := os.Open(framesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []frameCase
	var cur *frameCase
	inBytes := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && (line == "" || strings.HasPrefix(line, "#")):
		case line == "":
			cur, inBytes = nil, false
		case cur == nil:
			kind, name, _ := strings.Cut(line, " ")
			cases = append(cases, frameCase{kind: kind, name: name, keys: map[string]string{}, head: []string{line}})
			cur = &cases[len(cases)-1]
		case line == "----":
			inBytes = true
			cur.head = append(cur.head, line)
		case inBytes:
			cur.hex += strings.Join(strings.Fields(line), "")
			cur.body = append(cur.body, line)
		default:
			k, v, _ := strings.Cut(line, " ")
			cur.keys[k] = v
			cur.head = append(cur.head, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// writeFrameCases writes framesFile again: its header as it was, then the
// cases, each with its bytes (rewritten, or as read).
func writeFrameCases(t *testing.T, cases []frameCase) {
	old, err := os.ReadFile(framesFile)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(old), "\n"+cases[0].head[0]+"\n")
	var b strings.Builder
	b.WriteString(header + "\n")
	for _, c := range cases {
		for _, l := range append(c.head, c.body...) {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(framesFile, []byte(strings.TrimSuffix(b.String(), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
