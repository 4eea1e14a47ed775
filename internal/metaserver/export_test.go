package metaserver

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
)

// GarbageQueued returns how many entries the block garbage queue holds.
func (s *Server) GarbageQueued() (int, error) {
	var n int
	err := s.store.View(func(r kv.Reader) error {
		items, err := namespace.GarbageBatch(r, 1<<20)
		n = len(items)
		return err
	})
	return n, err
}
