package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Identity is who a call comes from.
type Identity struct {
	Caller statemachine.Caller
	Token  *pb.TokenIdentifier // nil for the service itself
}

type identityKey struct{}

// Tokens authenticates calls by their tokens, and issues tokens. It is
// safe for concurrent use.
type Tokens struct {
	cfg   Config
	state State
	gen   atomic.Uint64 // bumped by every applied change of the token state
	cache atomic.Pointer[tokenState]
	// signed holds tokens whose signature checked, by their text; it is
	// emptied when it grows past maxSigned.
	signed  sync.Map
	nsigned atomic.Int64
}

// NewTokens returns the tokens of the member st.
func NewTokens(cfg Config, st State) *Tokens { return &Tokens{cfg: cfg, state: st} }

// tokenState is the token state as applied: the signing keys and the
// records of the tokens still of use, as of generation gen.
type tokenState struct {
	gen    uint64
	keys   map[uint32][]byte
	tokens map[uint64]*kvschema.TokenRecord
}

const maxSigned = 1 << 14

// Changed tells that an applied command changed the token state. The
// member calls it before the command's answer is delivered: a new token
// works at once, a revoked one never again.
func (t *Tokens) Changed() { t.gen.Add(1) }

// applied returns the token state as applied.
func (t *Tokens) applied() (*tokenState, error) {
	gen := t.gen.Load()
	if st := t.cache.Load(); st != nil && st.gen == gen {
		return st, nil
	}
	st := &tokenState{gen: gen}
	err := t.state.Applied(func(r kv.Reader) (err error) {
		if st.keys, err = statemachine.TokenKeys(r); err != nil {
			return err
		}
		st.tokens, err = statemachine.TokenRecords(r, t.state.Now().UnixMilli())
		return err
	})
	if err != nil {
		return nil, err
	}
	t.cache.Store(st)
	return st, nil
}

func unauthenticated(format string, args ...any) error {
	return fserr.Errorf(fserr.ErrUnauthenticated, "unauthenticated: "+format, args...)
}

// noToken is the answer to a call that carries no token.
var noToken = unauthenticated("the call carries no token: set $STRATA_TOKEN or write one to ~/.strata/token " +
	"(--token-file; the Hadoop client: fs.strata.token or fs.strata.token.file); a superuser issues them with " +
	"'strata admin token create --user NAME'")

// AsService returns ctx carrying the service's own identity: the
// superuser, for the work the service does on its own behalf.
func (t *Tokens) AsService(ctx context.Context) context.Context {
	return context.WithValue(ctx, identityKey{}, &Identity{Caller: statemachine.Caller{User: t.cfg.Superuser}})
}

// Identify returns who the call in ctx comes from: the identity the
// interceptor found (or the service's own), else the one its token proves.
// With authentication off it returns nil: the request's header says.
func (t *Tokens) Identify(ctx context.Context) (*Identity, error) {
	if t.cfg.NoAuth {
		return nil, nil
	}
	if id, ok := ctx.Value(identityKey{}).(*Identity); ok {
		return id, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(token.MetadataKey)
	if len(vals) == 0 {
		return nil, noToken
	}
	text, ok := strings.CutPrefix(vals[0], token.Bearer)
	if !ok {
		return nil, unauthenticated("the %s metadata is not %q followed by a token", token.MetadataKey, token.Bearer)
	}
	return t.Authenticate(text)
}

// Authenticate checks token text: the service signed it, with a key of its
// state, and its record says it is neither revoked nor expired, and is the
// token's (boundToRecord). A member that does not lead and lacks the key or
// the record may not have applied them yet: it answers NOT_LEADER, and the
// leader judges.
func (t *Tokens) Authenticate(text string) (*Identity, error) {
	st, err := t.applied()
	if err != nil {
		return nil, err
	}
	tok, err := t.checkSigned(st, text)
	if err != nil {
		return nil, err
	}
	id := tok.ID
	caller, expires := statemachine.Caller{User: id.GetUser(), Groups: id.GetGroups()}, id.GetExpires()
	switch rec := st.tokens[id.GetId()]; {
	case rec == nil && t.state.IsLeader():
		return nil, unauthenticated("token %d is not one this cluster knows (it expired past renewal, or another cluster issued it)", id.GetId())
	case rec != nil && rec.Revoked != 0:
		return nil, unauthenticated("token %d of %s was revoked at %s", id.GetId(), id.GetUser(), statemachine.Stamp(rec.Revoked))
	case rec != nil:
		if err := boundToRecord(id, rec); err != nil {
			return nil, err
		}
		caller, expires = statemachine.Caller{User: rec.User, Groups: rec.Groups}, rec.Expires
	}
	if now := t.state.Now().UnixMilli(); now > expires {
		return nil, unauthenticated("token %d of %s expired at %s: a token can be renewed only before it expires; "+
			"a superuser issues a new one ('strata admin token create --user %s')", id.GetId(), id.GetUser(),
			statemachine.Stamp(expires), id.GetUser())
	}
	return &Identity{Caller: caller, Token: id}, nil
}

// boundToRecord checks that a token's identifier says what the record of
// its id does: the record, which only the service writes, is the
// authority on whose token it is. NB: the signature alone cannot say it.
// Whoever holds the signing key (read from a member's disk, say) signs
// any identifier, such as "token 2 of root" where token 2 is alice's; this
// refuses it, as it refuses other groups or dates than the record's. The
// expiry is the record's, which renewals move: the identifier's may only
// not pass the record's max date.
func boundToRecord(id *pb.TokenIdentifier, rec *kvschema.TokenRecord) error {
	if id.GetUser() != rec.User || !slices.Equal(id.GetGroups(), rec.Groups) || id.GetIssued() != rec.Issued ||
		id.GetMaxDate() != rec.MaxDate || id.GetRenewable() != rec.Renewable || id.GetExpires() > rec.MaxDate {
		return unauthenticated("token %d of %s is not the token %d this cluster issued (forged with its signing key?)",
			id.GetId(), id.GetUser(), id.GetId())
	}
	return nil
}

// checkSigned parses text and checks that the service signed it.
func (t *Tokens) checkSigned(st *tokenState, text string) (*token.Token, error) {
	if v, ok := t.signed.Load(text); ok {
		return v.(*token.Token), nil
	}
	tok, err := token.Parse(text)
	if err != nil {
		return nil, unauthenticated("%v", err)
	}
	if c := tok.ID.GetCluster(); c != "" && c != t.cfg.ClusterID {
		return nil, unauthenticated("token %d was issued by cluster %q, not this one (%q)", tok.ID.GetId(), c, t.cfg.ClusterID)
	}
	secret, ok := st.keys[tok.ID.GetKeyId()]
	if !ok && !t.state.IsLeader() {
		return nil, t.state.NotLeader()
	}
	if !tok.Verify(secret) {
		return nil, unauthenticated("token %d was not signed by this cluster (forged, or another cluster's)", tok.ID.GetId())
	}
	if t.nsigned.Add(1) > maxSigned {
		t.signed.Clear()
		t.nsigned.Store(0)
	}
	t.signed.Store(text, tok)
	return tok, nil
}

// Interceptor authenticates every MetaService call (RaftService's are the
// members' own, not a client's), and hands the handler the caller's
// identity in its context.
func (t *Tokens) Interceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if t.cfg.NoAuth || !strings.HasPrefix(info.FullMethod, "/"+pb.MetaService_ServiceDesc.ServiceName+"/") {
		return h(ctx, req)
	}
	id, err := t.Identify(ctx)
	if err != nil {
		return nil, err
	}
	return h(context.WithValue(ctx, identityKey{}, id), req)
}

// CheckCaller sets the caller of header h from the identity of the call in
// ctx (with authentication off, h says who calls), then checks h.
func (t *Tokens) CheckCaller(ctx context.Context, h *pb.Header) error {
	id, err := t.Identify(ctx)
	if err != nil {
		return err
	}
	if id != nil && h != nil {
		h.User, h.Groups = id.Caller.User, id.Caller.Groups
	}
	if h.GetUser() == "" {
		return fserr.Errorf(fserr.ErrInvalidArgument, "request header has no user")
	}
	if len(h.GetRequestId()) > kvschema.MaxRequestID {
		return fserr.Errorf(fserr.ErrInvalidArgument, "request id of %d bytes: at most %d", len(h.GetRequestId()), kvschema.MaxRequestID)
	}
	return nil
}

// RequireSuperuser checks that the call in ctx comes from a superuser, for
// what. With authentication off, header h says who calls (a call without
// one passes, as every call did before authentication).
func (t *Tokens) RequireSuperuser(ctx context.Context, h *pb.Header, what string) error {
	id, err := t.Identify(ctx)
	if err != nil || (id == nil && h == nil) {
		return err
	}
	c := statemachine.CallerOf(h)
	if id != nil {
		c = id.Caller
	}
	if !t.state.IsSuperuser(c) {
		return fserr.Errorf(fserr.ErrPermission, "%s: only a superuser may (%s is not one)", what, c.User)
	}
	return nil
}

// WhoAmI answers who the call in ctx comes from.
func (t *Tokens) WhoAmI(ctx context.Context) (*pb.WhoAmIResponse, error) {
	id, err := t.Identify(ctx)
	if err != nil {
		return nil, err
	}
	if id == nil {
		return nil, fserr.Errorf(fserr.ErrUnsupported, "authentication is off (--insecure-no-auth): the caller is whoever a request says")
	}
	return &pb.WhoAmIResponse{User: id.Caller.User, Groups: id.Caller.Groups, Token: id.Token,
		Superuser: t.state.IsSuperuser(id.Caller)}, nil
}

// EnsureKey has the service draw a signing key if its state holds none:
// the cluster secret token-key/1. Only the leader proposes; two leaders
// that both do keep the first's (statemachine.SetSecret).
func (t *Tokens) EnsureKey(ctx context.Context) error {
	st, err := t.applied()
	if err != nil || len(st.keys) > 0 {
		return err
	}
	secret := make([]byte, token.SecretLen)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	_, err = t.state.Propose(ctx, statemachine.SetSecret.Command(&pb.SetSecretCommand{Name: statemachine.TokenKeySecret(1), Secret: secret}))
	return err
}

// Issue issues a token for user and groups, valid for ttl (0: the
// default) and renewable up to the default max lifetime or ttl, whichever
// is longer, as the service itself: what the dev server writes for its
// user, and what tests give their clients.
func (t *Tokens) Issue(ctx context.Context, user string, groups []string, ttl time.Duration) (string, error) {
	r := &pb.CreateTokenRequest{Header: &pb.Header{User: t.cfg.Superuser}, User: user, Groups: groups,
		TtlMs: ttl.Milliseconds(), MaxLifetimeMs: max(ttl, token.DefaultMaxLifetime).Milliseconds()}
	if err := t.Prepare(ctx, r); err != nil {
		return "", err
	}
	res, err := t.state.Propose(ctx, statemachine.CreateToken.Command(r))
	return statemachine.CreateToken.Result(res), err
}

// Prepare readies a request for a new token before it is proposed: it
// checks the names of its user and groups (token.CheckName) and its
// lifetimes (token.Lifetimes), which it fills in, so that the command in
// the log says what was decided; it names this cluster; and it has the
// service draw a signing key if it has none.
func (t *Tokens) Prepare(ctx context.Context, r *pb.CreateTokenRequest) error {
	for _, name := range append([]string{r.GetUser()}, r.GetGroups()...) {
		if err := token.CheckName(name); err != nil {
			return fserr.Errorf(fserr.ErrInvalidArgument, "create a token for %q: %v", r.GetUser(), err)
		}
	}
	if r.GetTtlMs() > maxLifetimeMs || r.GetMaxLifetimeMs() > maxLifetimeMs {
		return fserr.Errorf(fserr.ErrInvalidArgument, "create a token for %s: lifetimes of %d and %d ms: at most %d",
			r.GetUser(), r.GetTtlMs(), r.GetMaxLifetimeMs(), maxLifetimeMs)
	}
	ttl, maxLife, err := token.Lifetimes(time.Duration(r.GetTtlMs())*time.Millisecond,
		time.Duration(r.GetMaxLifetimeMs())*time.Millisecond)
	if err != nil {
		return fserr.Errorf(fserr.ErrInvalidArgument, "create a token for %s: %v", r.GetUser(), err)
	}
	r.TtlMs, r.MaxLifetimeMs, r.Cluster = ttl.Milliseconds(), maxLife.Milliseconds(), t.cfg.ClusterID
	return t.EnsureKey(ctx)
}

// maxLifetimeMs bounds the lifetimes a request may ask for, in
// milliseconds: what a time.Duration holds.
const maxLifetimeMs = math.MaxInt64 / int64(time.Millisecond)

// AdminTokenTTL is how long the admin tokens the service writes for its
// superuser are valid (Config.AdminTokenFile).
const AdminTokenTTL = 30 * 24 * time.Hour

// AdminToken returns a token of the superuser that this service accepts:
// the one in Config.AdminTokenFile, or a new one, which it writes there
// (readable by its owner only). A leader calls it when it takes over, so
// that a new cluster's first administrator finds a token in a member's
// data directory.
func (t *Tokens) AdminToken(ctx context.Context) (string, error) {
	path := t.cfg.AdminTokenFile
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			if text := strings.TrimSpace(string(b)); text != "" {
				if _, err := t.Authenticate(text); err == nil {
					return text, nil
				}
			}
		}
	}
	text, err := t.Issue(ctx, t.cfg.Superuser, nil, AdminTokenTTL)
	if err != nil || path == "" {
		return text, err
	}
	return text, token.WriteFile(path, text)
}

// Upkeep is the leader's job for tokens, when it takes over and then now
// and then: a signing key if the state has none, the admin token file,
// and the records of tokens long past their max date forgotten.
func (t *Tokens) Upkeep(ctx context.Context) error {
	if !t.state.IsLeader() {
		return nil
	}
	err := t.EnsureKey(ctx)
	if err == nil && t.cfg.AdminTokenFile != "" && !t.cfg.NoAuth {
		_, err = t.AdminToken(ctx)
	}
	if err == nil {
		err = t.forget(ctx)
	}
	if errors.Is(err, fserr.ErrNotLeader) {
		return nil // it lost the lead meanwhile: the next leader does it
	}
	return err
}

// tokenMemory is how long past its max date a token's record is kept
// (for `admin token show`, and a clock a little behind), before the leader
// removes it.
const tokenMemory = 24 * time.Hour

// forget removes the records of tokens past their max date by more than
// tokenMemory, in bounded commands.
func (t *Tokens) forget(ctx context.Context) error {
	const batch = 1000
	before := t.state.Now().Add(-tokenMemory).UnixMilli()
	for t.state.IsLeader() {
		var past []uint64
		if err := t.state.Applied(func(r kv.Reader) (err error) {
			past, err = statemachine.TokensPast(r, before, 1)
			return err
		}); err != nil || len(past) == 0 {
			return err
		}
		cmd := statemachine.ForgetTokens.Command(&pb.ForgetTokensCommand{Before: before, Limit: batch})
		if _, err := t.state.Propose(ctx, cmd); err != nil {
			return err
		}
	}
	return nil
}
