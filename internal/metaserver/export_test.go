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

// HoldLogWrite makes the member's proposers see a log write under way
// until end is called, as they see the Raft loop's.
func (m *Member) HoldLogWrite() (end func()) {
	ps := &m.core.props
	ps.mu.Lock()
	was := ps.logWrite
	ps.mu.Unlock()
	w := make(chan struct{})
	ps.setLogWrite(func() <-chan struct{} { return w })
	return func() {
		ps.setLogWrite(was)
		close(w)
	}
}

// QueuedCommands returns how many commands wait for the next entry.
func (m *Member) QueuedCommands() int {
	m.core.props.mu.Lock()
	defer m.core.props.mu.Unlock()
	return len(m.core.props.queue)
}
