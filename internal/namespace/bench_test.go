package namespace_test

import (
	"fmt"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

// BenchmarkCreateApply applies creates the way the service applies a
// command group: each create after a mark in the group's overlay, 16 to a
// group, each group one commit to pebble. It measures the serial apply's
// CPU per create, which bounds the creates per second of one member.
func BenchmarkCreateApply(b *testing.B) {
	store, err := pebblekv.Open(b.TempDir(), pebblekv.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	fs := namespace.New(namespace.DefaultConfig("super"))
	now := int64(1000)
	group := kv.NewOverlay(store.Writer())
	if err := fs.CreateNamespace(group, now, super, kvschema.Namespace{Name: dflt, Mode: 1}); err != nil {
		b.Fatal(err)
	}
	const dirs = 64
	for d := range dirs {
		if _, err := fs.Mkdirs(group, now, super, dflt, fmt.Sprintf("/bench/t%02d", d), 0o755, 0o022, true); err != nil {
			b.Fatal(err)
		}
	}
	if err := store.Commit(group, false); err != nil {
		b.Fatal(err)
	}
	paths := make([]string, b.N)
	for i := range paths {
		paths[i] = fmt.Sprintf("/bench/t%02d/f%09d", i%dirs, i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i += 16 {
		now++
		group := kv.NewOverlay(store.Writer())
		for _, p := range paths[i:min(i+16, b.N)] {
			group.Mark()
			if _, err := fs.Create(group, now, super, dflt, p, namespace.CreateOptions{Perm: 0o644, Closed: true, Holder: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		if err := store.Commit(group, false); err != nil {
			b.Fatal(err)
		}
	}
}
