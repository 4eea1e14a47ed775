package pebblekv

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/internal/kv"
)

// TestGetManyAsGets: GetMany answers, in the order asked and with the keys
// unsorted and repeated, what a Get of each answers, whether the hot cache
// holds the key, holds that it is missing, or does not know it; with the
// hot cache off; and through an overlay with writes and without.
func TestGetManyAsGets(t *testing.T) {
	for _, hot := range []int64{0, 1 << 20} {
		t.Run(fmt.Sprintf("hot=%d", hot), func(t *testing.T) {
			s := open(t, filepath.Join(t.TempDir(), "state"), hot)
			defer s.Close()
			ov := kv.NewOverlay(s.Writer())
			for i := range 500 {
				ov.Set(fmt.Appendf(nil, "k%04d", i*2), fmt.Appendf(nil, "value of %d", i*2))
			}
			if err := s.Commit(ov, false); err != nil {
				t.Fatal(err)
			}
			var keys [][]byte
			for i := 997; i >= 0; i -= 3 {
				keys = append(keys, fmt.Appendf(nil, "k%04d", i))
			}
			keys = append(keys, []byte("k0010"), []byte("a"), []byte("z"))
			err := s.View(func(r kv.Reader) error {
				for _, k := range keys[:50] { // some in the cache, found or missing
					r.Get(k)
				}
				for _, view := range []kv.Reader{r, kv.NewOverlay(r), withWrite(r)} {
					if err := sameAsGets(view, keys); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func withWrite(r kv.Reader) kv.Reader {
	ov := kv.NewOverlay(r)
	ov.Set([]byte("k0001"), []byte("written"))
	ov.Delete([]byte("k0010"))
	return ov
}

func sameAsGets(r kv.Reader, keys [][]byte) error {
	n := 0
	err := kv.GetMany(r, keys, func(i int, v []byte, ok bool) error {
		if i != n {
			return fmt.Errorf("answer %d came as %d", n, i)
		}
		n++
		want, wantOK, err := r.Get(keys[i])
		if err != nil {
			return err
		}
		if ok != wantOK || string(v) != string(want) {
			return fmt.Errorf("%s: GetMany %q %v, Get %q %v", keys[i], v, ok, want, wantOK)
		}
		return nil
	})
	if err == nil && n != len(keys) {
		err = fmt.Errorf("%d answers for %d keys", n, len(keys))
	}
	return err
}
