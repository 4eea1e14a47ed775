package kv_test

import (
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

// An overlay over a populated base, itself under an overlay: the stacking the
// apply path uses.
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
