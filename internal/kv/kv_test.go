package kv_test

import (
	"fmt"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/kvtest"
)

func TestMem(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Txn { return kv.NewMem() })
}

func TestOverlayOverEmpty(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Txn { return kv.NewOverlay(kv.NewMem()) })
}

// An overlay over a populated base, itself under an overlay.
func TestOverlayStacked(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Txn {
		base := kv.NewMem()
		for _, k := range []string{"k03", "k10", "k17", "k33"} {
			base.Set([]byte(k), []byte("base"))
		}
		mid := kv.NewOverlay(base)
		mid.Set([]byte("k05"), []byte("mid"))
		mid.Delete([]byte("k10"))
		wipe := kv.NewOverlay(mid)
		for _, k := range []string{"k03", "k05", "k17", "k33"} {
			wipe.Delete([]byte(k))
		}
		return wipe
	})
}

// An overlay whose writes are recorded for a rollback behaves the same.
func TestOverlayMarked(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Txn {
		o := kv.NewOverlay(kv.NewMem())
		o.Mark()
		return o
	})
}

// Rollback undoes what was written since the mark, however often a key was
// written, and nothing before it; a later mark starts afresh.
func TestOverlayRollback(t *testing.T) {
	base := kv.NewMem()
	base.Set([]byte("in-base"), []byte("base"))
	o := kv.NewOverlay(base)
	o.Set([]byte("before"), []byte("1"))
	o.Mark()
	o.Set([]byte("before"), []byte("2"))
	o.Set([]byte("before"), []byte("3"))
	o.Set([]byte("new"), []byte("x"))
	o.Delete([]byte("in-base"))
	o.Rollback()
	want := map[string]string{"before": "1", "in-base": "base", "new": "<missing>"}
	check := func(when string) {
		t.Helper()
		for k, w := range want {
			v, ok, err := o.Get([]byte(k))
			got := string(v)
			if !ok {
				got = "<missing>"
			}
			if err != nil || got != w {
				t.Errorf("%s: %s = %q, %v; want %q", when, k, got, err, w)
			}
		}
	}
	check("after rollback")
	if o.Len() != 1 {
		t.Errorf("after rollback: %d buffered writes, want 1", o.Len())
	}

	o.Set([]byte("kept"), []byte("k"))
	o.Mark()
	o.Delete([]byte("kept"))
	o.Rollback()
	want["kept"] = "k"
	check("after a second mark")
	var keys []string
	o.Each(func(k, _ []byte, _ bool) { keys = append(keys, string(k)) })
	if got := fmt.Sprint(keys); got != "[before kept]" {
		t.Errorf("writes after rollbacks: %s, want [before kept]", got)
	}
}

// kv.GetAppend over a Reader without GetAppend appends a copy: the buffer
// it returns may be written without changing what the Reader holds.
func TestGetAppendCopies(t *testing.T) {
	m := kv.NewMem()
	m.Set([]byte("k"), []byte("value"))
	buf, ok, err := kv.GetAppend(m, []byte("x"), []byte("k"))
	if err != nil || !ok || string(buf) != "xvalue" {
		t.Fatalf("GetAppend = %q %v %v", buf, ok, err)
	}
	buf, ok, err = kv.GetAppend(m, buf[:0], []byte("k"))
	if err != nil || !ok || string(buf) != "value" {
		t.Fatalf("GetAppend into the same buffer = %q %v %v", buf, ok, err)
	}
	buf[0] = 'V'
	if v, _, _ := m.Get([]byte("k")); string(v) != "value" {
		t.Fatalf("the Mem holds %q after its value was appended and changed", v)
	}
	if buf, ok, _ := kv.GetAppend(m, []byte("x"), []byte("missing")); ok || string(buf) != "x" {
		t.Fatalf("a missing key: %q %v", buf, ok)
	}
}
