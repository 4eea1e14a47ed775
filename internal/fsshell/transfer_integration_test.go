package fsshell

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Files of every interesting size go in with -put, out with -get and -cat,
// across with -cp, and their ends come back with -tail, unchanged: empty,
// one byte, the inline limit, one past it (the first to need a worker), and
// several blocks ending mid-block.
func TestTransferSizes(t *testing.T) {
	e := newDataEnv(t)
	dir := t.TempDir()
	e.ok("-mkdir", "/in", "/cp")
	for i, n := range []int{0, 1, 4096, 4097, 5*testBlockSize + 3} {
		name := fmt.Sprintf("f%d", n)
		local := filepath.Join(dir, name)
		data := writeRandom(t, local, uint64(i), n)
		e.expect(0, "", "", "-put", local, "/in")
		e.expect(0, lines(fmt.Sprintf("%d %d", n, testBlockSize)), "", "-stat", "%b %o", "/in/"+name)
		checkOut(t, e, "/in/"+name, data)
		e.expect(0, "", "", "-cp", "/in/"+name, "/cp")
		checkOut(t, e, "/cp/"+name, data)
		e.expect(0, string(data[max(0, n-tailBytes):]), "", "-tail", "/cp/"+name)
	}
	e.expect(0, lines("/cp/f0", "/cp/f1", "/cp/f4096", "/cp/f4097", "/cp/f5242883"), "", "-ls", "-C", "/cp")
}

// checkOut reads remote back with -cat and -get and compares both with
// data by SHA-256.
func checkOut(t *testing.T, e *env, remote string, data []byte) {
	t.Helper()
	if out := e.ok("-cat", remote); sha([]byte(out)) != sha(data) {
		t.Fatalf("-cat %s: %d bytes, want %d, or different content", remote, len(out), len(data))
	}
	local := filepath.Join(t.TempDir(), "got")
	e.expect(0, "", "", "-copyToLocal", remote, local)
	if shaFile(t, local) != sha(data) {
		t.Fatalf("-get %s: content differs", remote)
	}
}

// Standard input streams in whatever its length, with no size known ahead.
func TestPutLargeStdin(t *testing.T) {
	e := newDataEnv(t)
	data := randomBytes(9, 3*testBlockSize+17)
	c := e.as(e.super)
	c.stdin = bytes.NewReader(data)
	c.expect(t, 0, "", "", "-put", "-", "/s")
	checkOut(t, e, "/s", data)
	e.expect(0, "", "", "-copyFromLocal", "-d", "-f", writeTemp(t, data[:5000]), "/s")
	checkOut(t, e, "/s", data[:5000])
}

// Without a worker, a file past the inline limit cannot be written: the
// copy fails, naming the file and the cause (a temporary one: no live
// workers), and leaves nothing behind.
func TestPutWithoutWorker(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "/in")
	r := e.as(e.super).run("-put", writeTemp(t, bytes.Repeat([]byte("x"), 5000)), "/in/big")
	if r.code != 1 || !strings.HasPrefix(r.err, "put: write /in/big._COPYING_: no live workers (") || strings.Count(r.err, "\n") != 1 {
		t.Fatalf("big put: %+v", r)
	}
	e.expect(0, "", "", "-ls", "-C", "/in")
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src")
	writeLocal(t, p, string(data))
	return p
}
