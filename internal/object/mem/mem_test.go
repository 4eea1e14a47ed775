package mem_test

import (
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/objtest"
)

func TestConformance(t *testing.T) {
	objtest.Run(t, func(t *testing.T) object.Store { return mem.New() })
}

func BenchmarkStore(b *testing.B) { objtest.Bench(b, mem.New()) }
