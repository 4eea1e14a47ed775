package metaserver

import (
	"github.com/stratafs/strata/internal/kv"
	sm "github.com/stratafs/strata/internal/statemachine"
)

// TokenKey returns signing key id as the service's state holds it: what
// someone who read a member's disk would hold, with which the tests forge
// tokens.
func (m *Member) TokenKey(id uint32) []byte {
	var keys map[uint32][]byte
	if err := m.core.Applied(func(r kv.Reader) (err error) {
		keys, err = sm.TokenKeys(r)
		return err
	}); err != nil {
		return nil
	}
	return keys[id]
}
