package metaserver

import (
	"testing"

	"github.com/stratafs/strata/internal/cachemode"
	sm "github.com/stratafs/strata/internal/statemachine"
)

// TestEveryOperationHasItsSteps fails on an operation of the state
// machine's table without an entry in the service's, or with a step left
// out: each is a function, or the named none.
func TestEveryOperationHasItsSteps(t *testing.T) {
	for _, op := range sm.Ops() {
		st, ok := table[op]
		switch {
		case !ok:
			t.Errorf("%s: no entry in the service's table (steps.go)", op.Name)
		case st.admit == nil || st.prepare == nil || st.finish == nil || st.grant == nil:
			t.Errorf("%s: a step is left out: %+v", op.Name, st)
		case op.Kind == sm.Internal && st.prepare != cachemode.NoBucketSide:
			t.Errorf("%s: a command of the service's own has a bucket side", op.Name)
		}
	}
	if len(table) != len(sm.Ops()) {
		t.Errorf("the service's table has %d entries for %d operations", len(table), len(sm.Ops()))
	}
}
