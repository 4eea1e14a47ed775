package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
)

// serve starts an agent of c on a socket in a private directory, edited
// by edit first, if given.
func serve(t *testing.T, c *client.Client, edit ...func(*Server)) (*Server, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	s := New(c)
	for _, e := range edit {
		e(s)
	}
	go s.Serve(ln)
	t.Cleanup(s.Close)
	return s, sock
}

// offline is a client of a service that is not there: enough for what the
// agent refuses before any call.
func offline(t *testing.T) *client.Client {
	c, err := client.New(client.Config{Meta: "127.0.0.1:1", ConnectTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// caller is a test's connection to an agent, as the Python package makes one.
type caller struct {
	t   *testing.T
	c   *net.UnixConn
	r   *bufio.Reader
	shm []byte
}

// memfd returns a memfd of size bytes, sealed with seals (0: none).
func memfd(t *testing.T, size int, seals int) int {
	t.Helper()
	fd, err := unix.MemfdCreate("agent-test", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		t.Fatal(err)
	}
	if seals != 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
			t.Fatal(err)
		}
	}
	return fd
}

const sealed = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW

// connect dials sock and sends hello with fd (-1: none); it returns the
// caller and the hello's answer.
func connect(t *testing.T, sock string, fd int) (*caller, map[string]any) {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cl := &caller{t: t, c: c, r: bufio.NewReader(c)}
	var oob []byte
	if fd >= 0 {
		oob = syscall.UnixRights(fd)
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil && st.Size > 0 && st.Size <= MaxShared {
			if b, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED); err == nil {
				cl.shm = b
				t.Cleanup(func() { syscall.Munmap(b) })
			}
		}
	}
	_, _, err = c.WriteMsgUnix(frameOf(t, map[string]any{"op": "hello", "version": Version}), oob, nil)
	if fd >= 0 {
		syscall.Close(fd)
	}
	if err != nil {
		return cl, nil // the agent closed the connection first
	}
	return cl, cl.answer()
}

func frameOf(t *testing.T, v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return appendFrame(nil, body)
}

// answer reads one answer; nil if the agent closed the connection.
func (cl *caller) answer() map[string]any {
	cl.t.Helper()
	_ = cl.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var hdr [4]byte
	if _, err := cl.r.Read(hdr[:1]); err != nil {
		return nil
	}
	if _, err := cl.r.Read(hdr[1:]); err != nil {
		cl.t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := ioReadFull(cl.r, body); err != nil {
		cl.t.Fatal(err)
	}
	var a map[string]any
	if err := json.Unmarshal(body, &a); err != nil {
		cl.t.Fatal(err)
	}
	return a
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// call sends req and returns its answer; nil if the agent closed the
// connection.
func (cl *caller) call(req map[string]any) map[string]any {
	cl.t.Helper()
	if _, err := cl.c.Write(frameOf(cl.t, req)); err != nil {
		return nil
	}
	return cl.answer()
}

// ok fails the test unless a is a success, and returns it.
func ok(t *testing.T, a map[string]any) map[string]any {
	t.Helper()
	if a == nil || a["ok"] != true {
		t.Fatalf("answer %v, want ok", a)
	}
	return a
}

// failed fails the test unless a is a failure of condition cond whose
// message says want.
func failed(t *testing.T, a map[string]any, cond, want string) {
	t.Helper()
	if a == nil || a["ok"] != false || a["cond"] != cond || !strings.Contains(a["msg"].(string), want) {
		t.Fatalf("answer %v, want a failure %s saying %q", a, cond, want)
	}
}

// TestTheHelloMustBringSealedMemory: the agent maps only a memfd sealed
// against shrinking and growing, of a size it accepts, and refuses the rest
// with a reason, closing the connection.
func TestTheHelloMustBringSealedMemory(t *testing.T) {
	_, sock := serve(t, offline(t))
	f, err := os.CreateTemp(t.TempDir(), "plain")
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(4096)
	plain, _ := syscall.Dup(int(f.Fd()))
	f.Close()
	for _, tc := range []struct {
		name string
		fd   int
		want string
	}{
		{"no descriptor", -1, "no shared memory descriptor"},
		{"a plain file", plain, "not a memfd"},
		{"unsealed", memfd(t, 4096, 0), "must be sealed"},
		{"only shrink sealed", memfd(t, 4096, unix.F_SEAL_SHRINK), "must be sealed"},
		{"empty", memfd(t, 0, sealed), "must hold 1 to"},
		{"too large", memfd(t, MaxShared+4096, sealed), "must hold 1 to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, a := connect(t, sock, tc.fd)
			failed(t, a, "invalid_argument", tc.want)
			if again := cl.call(map[string]any{"op": "user"}); again != nil {
				t.Fatalf("the connection served %v after a refused hello", again)
			}
		})
	}
	cl, a := connect(t, sock, memfd(t, 1<<20, sealed))
	ok(t, a)
	if a["shm"] != float64(1<<20) {
		t.Fatalf("hello answered %v", a)
	}
	ok(t, cl.call(map[string]any{"op": "user"}))
}

// TestMalformedRequests are answered with a reason, or end the connection
// when the framing itself is broken; the agent serves others meanwhile.
func TestMalformedRequests(t *testing.T) {
	_, sock := serve(t, offline(t))
	cl, a := connect(t, sock, memfd(t, 1<<20, sealed))
	ok(t, a)
	failed(t, cl.call(map[string]any{"op": "nope"}), "invalid_argument", `no operation "nope"`)
	if _, err := cl.c.Write(appendFrame(nil, []byte("{not json"))); err != nil {
		t.Fatal(err)
	}
	failed(t, cl.answer(), "invalid_argument", "not JSON")
	failed(t, cl.call(map[string]any{"op": "read", "h": 12345, "len": 10}), "invalid_argument", "no open file 12345")
	failed(t, cl.call(map[string]any{"op": "put", "path": "strata://default/x", "shm": (1 << 20) - 5, "len": 10}),
		"invalid_argument", "not inside the shared memory")
	failed(t, cl.call(map[string]any{"op": "put", "path": "strata://default/x", "shm": -1, "len": 1}),
		"invalid_argument", "not inside the shared memory")
	failed(t, cl.call(map[string]any{"op": "bench", "bench": map[string]any{"kind": "seq", "io_size": 1 << 40}}),
		"invalid_argument", "bench sizes")

	// A frame longer than MaxRequest closes the connection unread.
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], MaxRequest+1)
	cl.c.Write(hdr[:])
	if a := cl.answer(); a != nil {
		t.Fatalf("an oversized frame was answered: %v", a)
	}
	other, a := connect(t, sock, memfd(t, 1<<20, sealed))
	ok(t, a)
	ok(t, other.call(map[string]any{"op": "user"}))
}

// TestOtherUsersAreRefused: a connection whose peer is not the agent's user
// is closed before anything is read.
func TestOtherUsersAreRefused(t *testing.T) {
	_, sock := serve(t, offline(t), func(s *Server) { s.uid++ }) // the test's process is another user
	_, a := connect(t, sock, memfd(t, 4096, sealed))
	if a != nil {
		t.Fatalf("another user's hello was answered: %v", a)
	}
}

// TestAHelloMustComeInTime: a connection that sends no hello is closed
// after helloWithin; one that sent its hello is not, however long it then
// stays quiet.
func TestAHelloMustComeInTime(t *testing.T) {
	_, sock := serve(t, offline(t), func(s *Server) { s.helloWithin = 100 * time.Millisecond })
	greeted, a := connect(t, sock, memfd(t, 4096, sealed))
	ok(t, a)
	// Two silent ones, one after the other: the greeted one then stayed
	// quiet for twice helloWithin at least, so that an expired deadline
	// (not cleared after its hello) has surely ended it.
	for range 2 {
		silent, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		// NB: a bound on the test, not a timing it asserts: the agent
		// closes the connection long before.
		_ = silent.SetReadDeadline(time.Now().Add(time.Minute))
		n, err := silent.Read(make([]byte, 1))
		silent.Close()
		if n != 0 || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a connection without a hello got %d bytes, %v; want it closed", n, err)
		}
	}
	ok(t, greeted.call(map[string]any{"op": "user"}))
}

// TestAFileBelongsToItsProcess: a handle is refused to a process that did
// not open it (a forked child opens its own files).
func TestAFileBelongsToItsProcess(t *testing.T) {
	var fs files
	fs.m = map[uint64]*file{}
	h := fs.add(&file{pid: 10})
	if _, err := fs.get(h, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.get(h, 11); !errors.Is(err, fserr.ErrInvalidArgument) || !strings.Contains(err.Error(), "forked child") {
		t.Fatalf("another process's get: %v", err)
	}
}

// TestAProcessGoneAbortsItsWriters against a real server: a process whose
// last connection closes has its new files removed (a write it never
// completed), not completed with what it happened to send, nor left open.
// Without the abort the file stays, under construction, its lease renewed.
func TestAProcessGoneAbortsItsWriters(t *testing.T) {
	dev := testcluster.StartDev(t, t.TempDir())
	c := testcluster.Client(t, dev.Addr, "")
	s, sock := serve(t, c)
	cl, a := connect(t, sock, memfd(t, 1<<20, sealed))
	ok(t, a)
	copy(cl.shm, "partial")
	ok(t, cl.call(map[string]any{"op": "put", "path": "strata://default/done", "shm": 0, "len": 7, "parents": true}))
	h := ok(t, cl.call(map[string]any{"op": "create", "path": "strata://default/abandoned", "parents": true}))["h"]
	ok(t, cl.call(map[string]any{"op": "write", "h": h, "shm": 0, "len": 7}))
	r := ok(t, cl.call(map[string]any{"op": "open", "path": "strata://default/done"}))["h"]
	if s.files.count() != 2 {
		t.Fatalf("%d files open, want 2", s.files.count())
	}
	cl.c.Close()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for s.files.count() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // NB: polls the agent's table, not a timing
	}
	if n := s.files.count(); n != 0 {
		t.Fatalf("%d files still open after their process left", n)
	}
	if _, err := c.Stat(ctx, "/abandoned"); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("the abandoned file: %v, want it removed", err)
	}
	if got, err := c.ReadFile(ctx, "/done"); err != nil || string(got) != "partial" {
		t.Fatalf("the completed file: %q, %v", got, err)
	}
	_ = r
}

// TestLendHandsOnALease against a real server: the lease's descriptor comes
// with the answer, and the bytes it lends are the file's, each unit's CRC
// as the answer says.
func TestLendHandsOnALease(t *testing.T) {
	dev := testcluster.StartDev(t, t.TempDir())
	c := testcluster.Client(t, dev.Addr, "")
	data := make([]byte, 5<<20)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	if err := c.WriteFile(context.Background(), "/lent", data, client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, sock := serve(t, c)
	cl, a := connect(t, sock, memfd(t, 1<<20, sealed))
	ok(t, a)
	h := ok(t, cl.call(map[string]any{"op": "open", "path": "strata://default/lent"}))["h"]
	if _, err := cl.c.Write(frameOf(t, map[string]any{"op": "lend", "h": h, "off": 1 << 20, "len": 4096})); err != nil {
		t.Fatal(err)
	}
	buf, oob := make([]byte, 64<<10), make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := cl.c.ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("the lend's answer came with %d control messages (%v)", len(msgs), err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		t.Fatalf("the lend's answer came with descriptors %v (%v)", fds, err)
	}
	f := os.NewFile(uintptr(fds[0]), "lent")
	defer f.Close()
	var ans struct {
		OK     bool `json:"ok"`
		Leases []struct {
			Start int64    `json:"start"`
			First int64    `json:"first"`
			End   int64    `json:"end"`
			Unit  int64    `json:"unit"`
			CRCs  []uint32 `json:"crcs"`
		} `json:"leases"`
	}
	if err := json.Unmarshal(buf[4:n], &ans); err != nil || !ans.OK || len(ans.Leases) != 1 {
		t.Fatalf("the lend's answer %q: %v", buf[4:n], err)
	}
	l := ans.Leases[0]
	if l.Start != 0 || l.First > 1<<20 || l.End < (1<<20)+4096 || l.Unit <= 0 {
		t.Fatalf("lent %+v, want a lease holding [1 MiB, 1 MiB + 4096) of the block at 0", l)
	}
	got := make([]byte, l.End-l.First)
	if _, err := f.ReadAt(got, l.First); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data[l.First:l.End]) {
		t.Fatal("the lent file does not hold the file's bytes")
	}
	for i, want := range l.CRCs {
		unit := got[int64(i)*l.Unit : min(int64(i+1)*l.Unit, int64(len(got)))]
		if crc32.Checksum(unit, crc32.MakeTable(crc32.Castagnoli)) != want {
			t.Fatalf("unit %d's CRC is not the answer's", i)
		}
	}
}
