// Package auth is the part of the namespace service that says who calls
// and what the workers trust (docs/security.md): every MetaService call
// carries a token the service signed, and the caller is the token's user
// and groups, whatever a request's header says (Tokens); every answer that
// hands out a file's blocks carries a block access token the workers check
// (BlockTokens).
//
// The signing keys and the records of issued tokens live in the replicated
// state (statemachine's tokens.go), so that every member checks what any
// leader issued. Tokens keeps a copy in memory, reloaded once an applied
// command changed them (Changed), so that checking a call costs an HMAC
// (once per token: a checked signature is remembered) and two map lookups.
//
// It is not the service: it reads the applied state and proposes commands
// through State, which a member, or a test's in-memory replica, provides.
// Errors are fserr conditions.
package auth

import (
	"context"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// State is what authentication needs of the member it runs on. Its
// methods are safe for concurrent use.
type State interface {
	// Applied runs fn against the applied state (no read barrier).
	Applied(fn func(kv.Reader) error) error
	// Propose logs cmd and waits until it is applied; the error is the
	// command's answer if it failed, or why it was not applied.
	Propose(ctx context.Context, cmd *pb.Command) (statemachine.Result, error)
	// IsLeader reports whether this member leads.
	IsLeader() bool
	// NotLeader is the answer of a member that does not lead.
	NotLeader() error
	// Now is the member's clock.
	Now() time.Time
	// IsSuperuser reports whether c bypasses permission checks.
	IsSuperuser(c statemachine.Caller) bool
}

// Config configures authentication.
type Config struct {
	// ClusterID names the group: a token another cluster issued is
	// refused.
	ClusterID string
	// Superuser is the service's own identity (AsService) and whom the
	// admin token is for.
	Superuser string
	// NoAuth turns authentication off: the service believes whatever user
	// a request's header names (--insecure-no-auth).
	NoAuth bool
	// AdminTokenFile is where the leader writes a token of the superuser
	// when the file holds none it accepts (AdminToken); empty: nowhere.
	AdminTokenFile string
	// BlockTokenLifetime is how long a block access token is valid (at
	// most BlockKeyPeriod, its default); BlockKeyPeriod how often the keys
	// that sign them rotate (default blocktoken.DefaultPeriod).
	BlockTokenLifetime, BlockKeyPeriod time.Duration
}
