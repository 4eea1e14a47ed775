// Package kvtest is the conformance suite for kv.Txn implementations: every
// implementation must pass Run. It holds no implementation of its own.
package kvtest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratafs/strata/internal/kv"
)

// Run checks t against a reference model through a random sequence of
// writes, point reads and range scans. newTxn must return an empty Txn.
func Run(t *testing.T, newTxn func(t *testing.T) kv.Txn) {
	t.Run("random", func(t *testing.T) {
		for seed := uint64(1); seed <= 5; seed++ {
			runRandom(t, newTxn(t), seed)
		}
	})
	t.Run("empty-and-copied", func(t *testing.T) {
		// An empty value is a value, not a delete; a value is copied: the
		// caller may reuse its buffer.
		txn := newTxn(t)
		buf := []byte("v1")
		txn.Set([]byte("k"), buf)
		buf[1] = '2'
		txn.Set([]byte("e"), []byte{})
		for _, c := range []struct{ key, want string }{{"k", "v1"}, {"e", ""}} {
			v, ok, err := txn.Get([]byte(c.key))
			if err != nil || !ok || string(v) != c.want {
				t.Fatalf("Get(%q) = %q, %v, %v; want %q", c.key, v, ok, err, c.want)
			}
		}
		txn.Delete([]byte("e"))
		if v, ok, err := txn.Get([]byte("e")); err != nil || ok {
			t.Fatalf("Get of a deleted empty value = %q, %v, %v", v, ok, err)
		}
	})
	t.Run("scan-stops", func(t *testing.T) {
		txn := newTxn(t)
		for i := range 10 {
			txn.Set([]byte{byte(i)}, []byte{byte(i)})
		}
		n := 0
		if err := txn.Scan([]byte{2}, []byte{9}, func(k, v []byte) bool { n++; return n < 3 }); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("scan went on after fn returned false: %d calls", n)
		}
	})
}

func runRandom(t *testing.T, txn kv.Txn, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	model := kv.NewMem()
	key := func() []byte { return []byte(fmt.Sprintf("k%02d", rng.IntN(40))) }
	for step := range 2000 {
		switch rng.IntN(4) {
		case 0, 1:
			k, v := key(), []byte(fmt.Sprintf("v%d", step))
			txn.Set(k, v)
			model.Set(k, v)
		case 2:
			k := key()
			txn.Delete(k)
			model.Delete(k)
		case 3:
			a, b := key(), key()
			if string(a) > string(b) {
				a, b = b, a
			}
			if got, want := scan(t, txn, a, b), scan(t, model, a, b); got != want {
				t.Fatalf("seed %d step %d: scan [%s,%s) = %s, want %s", seed, step, a, b, got, want)
			}
		}
		k := key()
		gv, gok, _ := txn.Get(k)
		wv, wok, _ := model.Get(k)
		if gok != wok || string(gv) != string(wv) {
			t.Fatalf("seed %d step %d: get %s = %q,%v want %q,%v", seed, step, k, gv, gok, wv, wok)
		}
	}
}

func scan(t *testing.T, r kv.Reader, a, b []byte) string {
	t.Helper()
	out := ""
	if err := r.Scan(a, b, func(k, v []byte) bool { out += string(k) + "=" + string(v) + " "; return true }); err != nil {
		t.Fatal(err)
	}
	return out
}
