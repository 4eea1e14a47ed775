package metaserver

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
)

// GarbageQueued returns how many entries the block garbage queue holds.
func (m *Member) GarbageQueued() (int, error) {
	var n int
	err := m.core.Applied(func(r kv.Reader) error {
		items, err := statemachine.GarbageBatch(r, 1<<20)
		n = len(items)
		return err
	})
	return n, err
}
