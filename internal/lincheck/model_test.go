package lincheck

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op is an operation of client c from call to ret.
func op(c int, call, ret int64, in Input, out Output) porcupine.Operation {
	return porcupine.Operation{ClientId: c, Input: in, Output: out, Call: call, Return: ret}
}

// The model refuses what the failure tests look for: an acknowledged write
// lost, a refused one visible, a read of an old value after a newer one
// was read; it accepts an unanswered write seen or not.
func TestModel(t *testing.T) {
	pub := func(v int64) Input { return Input{Kind: Publish, A: 1, Value: v} }
	read := Input{Kind: Read, A: 1}
	mk := Input{Kind: Mkdir, A: 0, Perm: 0o750}
	stat := Input{Kind: Stat, A: 0}
	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"acknowledged publish read back", []porcupine.Operation{
			op(0, 0, 10, pub(7), Output{OK: true}), op(1, 11, 20, read, Output{Value: 7})}, porcupine.Ok},
		{"acknowledged publish lost", []porcupine.Operation{
			op(0, 0, 10, pub(7), Output{OK: true}), op(1, 11, 20, read, Output{Value: -1})}, porcupine.Illegal},
		{"old value after a newer one was read", []porcupine.Operation{
			op(0, 0, 10, pub(7), Output{OK: true}), op(0, 11, 20, pub(8), Output{OK: true}),
			op(1, 21, 30, read, Output{Value: 8}), op(1, 31, 40, read, Output{Value: 7})}, porcupine.Illegal},
		{"unanswered publish seen", []porcupine.Operation{
			op(0, 0, 1<<62, pub(7), Output{Unknown: true}), op(1, 11, 20, read, Output{Value: 7})}, porcupine.Ok},
		{"unanswered publish never seen", []porcupine.Operation{
			op(0, 0, 1<<62, pub(7), Output{Unknown: true}), op(1, 11, 20, read, Output{Value: -1})}, porcupine.Ok},
		{"a mkdir refused, yet visible", []porcupine.Operation{
			op(0, 0, 10, mk, Output{OK: false}), op(1, 11, 20, stat, Output{Perm: 0o750})}, porcupine.Illegal},
		{"a mkdir made, its permission read", []porcupine.Operation{
			op(0, 0, 10, mk, Output{OK: true}), op(1, 5, 20, stat, Output{Perm: 0o750})}, porcupine.Ok},
	} {
		if got := porcupine.CheckOperationsTimeout(Model, tc.ops, time.Minute); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A file's content carries its value and checksum: any change of a byte,
// or of its length, is found.
func TestContent(t *testing.T) {
	b := Content(42, 1000)
	if v, err := Parse(b); err != nil || v != 42 {
		t.Fatalf("Parse(Content(42)) = %d, %v", v, err)
	}
	for _, bad := range [][]byte{b[:999], append(append([]byte(nil), b...), 0), nil} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("a content of %d bytes parsed", len(bad))
		}
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 1
		if _, err := Parse(c); err == nil {
			t.Fatalf("a flipped bit at byte %d not found", i)
		}
	}
}
