package kv_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
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

// Scans see what marks and rollbacks left, through the overlay and through
// a reader over it (Over), whatever the order of writes, rollbacks and
// scans: the keys an overlay indexes for its scans follow them all, a key
// written again after its rollback included.
func TestOverlayScansAfterRollbacks(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed))
		base := kv.NewMem()
		for i := range 40 {
			if i%3 == 0 {
				base.Set([]byte(fmt.Sprintf("k%02d", i)), []byte("base"))
			}
		}
		o, model := kv.NewOverlay(base), map[string]string{}
		var saved map[string]string
		key := func() string { return fmt.Sprintf("k%02d", rng.IntN(40)) }
		for step := range 3000 {
			switch rng.IntN(8) {
			case 0, 1, 2:
				k, v := key(), fmt.Sprintf("v%d", step)
				o.Set([]byte(k), []byte(v))
				model[k] = v
			case 3:
				k := key()
				o.Delete([]byte(k))
				model[k] = ""
			case 4:
				o.Mark()
				saved = maps.Clone(model)
			case 5:
				if saved != nil {
					o.Rollback()
					model = maps.Clone(saved)
				}
			default:
				a, b := key(), key()
				if a > b {
					a, b = b, a
				}
				want := modelScan(base, model, a, b)
				for _, r := range []kv.Reader{o, o.Over(base)} {
					if got := scanAll(t, r, a, b); got != want {
						t.Fatalf("seed %d step %d: scan [%s,%s) = %s, want %s", seed, step, a, b, got, want)
					}
				}
			}
		}
	}
}

// modelScan is what a scan of [a, b) over base with the writes of model
// ("" a delete) returns.
func modelScan(base kv.Reader, model map[string]string, a, b string) string {
	all := map[string]string{}
	_ = base.Scan([]byte(a), []byte(b), func(k, v []byte) bool { all[string(k)] = string(v); return true })
	for k, v := range model {
		if k >= a && k < b {
			all[k] = v
		}
	}
	out := ""
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if all[k] != "" {
			out += k + "=" + all[k] + " "
		}
	}
	return out
}

func scanAll(t *testing.T, r kv.Reader, a, b string) string {
	t.Helper()
	out := ""
	if err := r.Scan([]byte(a), []byte(b), func(k, v []byte) bool { out += string(k) + "=" + string(v) + " "; return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Readers over one overlay (Over) scan it concurrently, each sorting keys
// the overlay wrote since the last scan (run with -race).
func TestOverlayReadersScanConcurrently(t *testing.T) {
	o := kv.NewOverlay(kv.NewMem())
	for i := range 1000 {
		o.Set([]byte(fmt.Sprintf("k%04d", i)), []byte("v"))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := scanAll(t, o.Over(kv.NewMem()), "k0100", "k0103"); got != "k0100=v k0101=v k0102=v " {
				t.Errorf("scan = %q", got)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkOverlayScanAmongMany scans a few keys of an overlay that holds
// thousands of buffered writes, one written before each scan: an apply of
// an hflush over a member's pending ones.
func BenchmarkOverlayScanAmongMany(b *testing.B) {
	o := kv.NewOverlay(kv.NewMem())
	for i := range 3000 {
		o.Set([]byte(fmt.Sprintf("k%06d", i*10)), []byte("v"))
	}
	b.ResetTimer()
	for i := range b.N {
		o.Set([]byte(fmt.Sprintf("k%06d", i%30000+1)), []byte("v"))
		if err := o.Scan([]byte("k001000"), []byte("k001020"), func(k, v []byte) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}
