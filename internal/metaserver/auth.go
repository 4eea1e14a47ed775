package metaserver

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
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Authentication (docs/security.md): every MetaService call carries a
// token the service signed; the caller is the token's user and groups,
// whatever a request's header says. The keys and the records of issued
// tokens live in the replicated state (internal/statemachine tokens.go);
// the service keeps a copy in memory, reloaded when an applied command
// changed them, so that checking a call costs an HMAC (once per token: a
// checked signature is remembered) and two map lookups.

// identity is who a call comes from.
type identity struct {
	caller namespace.Caller
	token  *pb.TokenIdentifier // nil for the service itself
}

type identityKey struct{}

// asService returns ctx carrying the service's own identity: the superuser,
// for the work the service does on its own behalf.
func (s *Server) asService(ctx context.Context) context.Context {
	return context.WithValue(ctx, identityKey{}, &identity{caller: namespace.Caller{User: s.cfg.Namespace.Superuser}})
}

// tokenState is the service's token state as applied: the signing keys and
// the records of the tokens still of use, as of generation gen.
type tokenState struct {
	gen    uint64
	keys   map[uint32][]byte
	tokens map[uint64]*kvschema.TokenRecord
}

// authenticator holds the token state in memory and the tokens whose
// signature it checked.
type authenticator struct {
	gen   atomic.Uint64 // bumped by every applied change of the token state
	state atomic.Pointer[tokenState]
	// signed holds tokens whose signature checked, by their text; it is
	// emptied when it grows past maxSigned.
	signed  sync.Map
	nsigned atomic.Int64
}

const maxSigned = 1 << 14

// tokensChanged runs after an applied command changed the token state,
// before its answer is delivered.
func (s *Server) tokensChanged() { s.auth.gen.Add(1) }

// tokenState returns the token state as applied.
func (s *Server) tokenState() (*tokenState, error) {
	gen := s.auth.gen.Load()
	if st := s.auth.state.Load(); st != nil && st.gen == gen {
		return st, nil
	}
	st := &tokenState{gen: gen}
	err := s.store.View(func(r kv.Reader) (err error) {
		if st.keys, err = statemachine.TokenKeys(r); err != nil {
			return err
		}
		st.tokens, err = statemachine.TokenRecords(r, s.cfg.Clock().UnixMilli())
		return err
	})
	if err != nil {
		return nil, err
	}
	s.auth.state.Store(st)
	return st, nil
}

func unauthenticated(format string, args ...any) error {
	return fserr.Errorf(fserr.ErrUnauthenticated, "unauthenticated: "+format, args...)
}

// noToken is the answer to a call that carries no token.
var noToken = unauthenticated("the call carries no token: set $STRATA_TOKEN or write one to ~/.strata/token " +
	"(--token-file; the Hadoop client: fs.strata.token or fs.strata.token.file); a superuser issues them with " +
	"'strata admin token create --user NAME'")

// identify returns who the call in ctx comes from: the identity the
// interceptor found (or the service's own), else the one its token proves.
// With authentication off it returns nil: the request's header says.
func (s *Server) identify(ctx context.Context) (*identity, error) {
	if s.cfg.NoAuth {
		return nil, nil
	}
	if id, ok := ctx.Value(identityKey{}).(*identity); ok {
		return id, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(token.MetadataKey)
	if len(vals) == 0 {
		return nil, noToken
	}
	t, ok := strings.CutPrefix(vals[0], token.Bearer)
	if !ok {
		return nil, unauthenticated("the %s metadata is not %q followed by a token", token.MetadataKey, token.Bearer)
	}
	return s.authenticate(t)
}

// authenticate checks token text t: the service signed it, with a key of
// its state, and its record says it is neither revoked nor expired, and
// is the token's (boundToRecord). A member that does not lead and lacks
// the key or the record may not have applied them yet: it answers
// NOT_LEADER, and the leader judges.
func (s *Server) authenticate(t string) (*identity, error) {
	st, err := s.tokenState()
	if err != nil {
		return nil, err
	}
	tok, err := s.checkSigned(st, t)
	if err != nil {
		return nil, err
	}
	id := tok.ID
	caller, expires := namespace.Caller{User: id.GetUser(), Groups: id.GetGroups()}, id.GetExpires()
	switch rec := st.tokens[id.GetId()]; {
	case rec == nil && s.isLeader():
		return nil, unauthenticated("token %d is not one this cluster knows (it expired past renewal, or another cluster issued it)", id.GetId())
	case rec != nil && rec.Revoked != 0:
		return nil, unauthenticated("token %d of %s was revoked at %s", id.GetId(), id.GetUser(), namespace.Stamp(rec.Revoked))
	case rec != nil:
		if err := boundToRecord(id, rec); err != nil {
			return nil, err
		}
		caller, expires = namespace.Caller{User: rec.User, Groups: rec.Groups}, rec.Expires
	}
	if now := s.cfg.Clock().UnixMilli(); now > expires {
		return nil, unauthenticated("token %d of %s expired at %s: a token can be renewed only before it expires; "+
			"a superuser issues a new one ('strata admin token create --user %s')", id.GetId(), id.GetUser(), namespace.Stamp(expires), id.GetUser())
	}
	return &identity{caller: caller, token: id}, nil
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

// checkSigned parses t and checks that the service signed it.
func (s *Server) checkSigned(st *tokenState, t string) (*token.Token, error) {
	if v, ok := s.auth.signed.Load(t); ok {
		return v.(*token.Token), nil
	}
	tok, err := token.Parse(t)
	if err != nil {
		return nil, unauthenticated("%v", err)
	}
	if c := tok.ID.GetCluster(); c != "" && c != s.cfg.ClusterID {
		return nil, unauthenticated("token %d was issued by cluster %q, not this one (%q)", tok.ID.GetId(), c, s.cfg.ClusterID)
	}
	secret, ok := st.keys[tok.ID.GetKeyId()]
	if !ok && !s.isLeader() {
		return nil, s.notLeader()
	}
	if !tok.Verify(secret) {
		return nil, unauthenticated("token %d was not signed by this cluster (forged, or another cluster's)", tok.ID.GetId())
	}
	if s.auth.nsigned.Add(1) > maxSigned {
		s.auth.signed.Clear()
		s.auth.nsigned.Store(0)
	}
	s.auth.signed.Store(t, tok)
	return tok, nil
}

// authUnary is the interceptor that authenticates every MetaService call
// (RaftService's are the members' own, not a client's).
func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if s.cfg.NoAuth || !strings.HasPrefix(info.FullMethod, "/"+pb.MetaService_ServiceDesc.ServiceName+"/") {
		return h(ctx, req)
	}
	id, err := s.identify(ctx)
	if err != nil {
		return nil, err
	}
	return h(context.WithValue(ctx, identityKey{}, id), req)
}

// stamp sets the caller of h from the identity of the call in ctx: with
// authentication on, what the client wrote there does not count.
func stamp(h *pb.Header, id *identity) {
	if id != nil && h != nil {
		h.User, h.Groups = id.caller.User, id.caller.Groups
	}
}

// superuser checks that the call in ctx comes from a superuser, for what.
// With authentication off, header h says who calls (a call without one
// passes, as every call did before authentication).
func (s *Server) superuser(ctx context.Context, h *pb.Header, what string) error {
	id, err := s.identify(ctx)
	if err != nil || (id == nil && h == nil) {
		return err
	}
	c := caller(h)
	if id != nil {
		c = id.caller
	}
	if !s.machine.FS().IsSuperuser(c) {
		return fserr.Errorf(fserr.ErrPermission, "%s: only a superuser may (%s is not one)", what, c.User)
	}
	return nil
}

// ensureTokenKey has the service draw a signing key if its state holds
// none: the cluster secret token-key/1. Only the leader proposes; two
// leaders that both do keep the first's (statemachine.SetSecret).
func (s *Server) ensureTokenKey(ctx context.Context) error {
	st, err := s.tokenState()
	if err != nil || len(st.keys) > 0 {
		return err
	}
	secret := make([]byte, token.SecretLen)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	res, err := s.propose(ctx, statemachine.SetSecret.Command(&pb.SetSecretCommand{Name: statemachine.TokenKeySecret(1), Secret: secret}))
	if err == nil {
		err = res.Err
	}
	return err
}

// IssueToken issues a token for user and groups, valid for ttl (0: the
// default) and renewable up to the default max lifetime or ttl, whichever
// is longer, as the service itself: what the dev server writes for its
// user, and what tests give their clients.
func (s *Server) IssueToken(ctx context.Context, user string, groups []string, ttl time.Duration) (string, error) {
	r, err := s.CreateToken(s.asService(ctx), &pb.CreateTokenRequest{Header: &pb.Header{}, User: user, Groups: groups,
		TtlMs: ttl.Milliseconds(), MaxLifetimeMs: max(ttl, token.DefaultMaxLifetime).Milliseconds()})
	if err != nil {
		return "", err
	}
	return r.GetToken(), nil
}

// CreateToken implements MetaService.
func (s *Server) CreateToken(ctx context.Context, r *pb.CreateTokenRequest) (*pb.CreateTokenResponse, error) {
	if err := s.superuser(ctx, r.GetHeader(), "create a token for "+r.GetUser()); err != nil {
		return nil, err
	}
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	if err := checkNewToken(r); err != nil {
		return nil, err
	}
	if err := s.ensureTokenKey(ctx); err != nil {
		return nil, err
	}
	r.Cluster = s.cfg.ClusterID
	return call[*pb.CreateTokenResponse](ctx, s, statemachine.CreateToken, r)
}

// maxLifetimeMs bounds the lifetimes a request may ask for, in
// milliseconds: what a time.Duration holds.
const maxLifetimeMs = math.MaxInt64 / int64(time.Millisecond)

// checkNewToken checks what a new token would carry before anything is
// proposed: the names of its user and groups (token.CheckName), and its
// lifetimes (token.Lifetimes), which it fills in, so that the command in
// the log says what was decided.
func checkNewToken(r *pb.CreateTokenRequest) error {
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
	r.TtlMs, r.MaxLifetimeMs = ttl.Milliseconds(), maxLife.Milliseconds()
	return nil
}

// RenewToken implements MetaService.
func (s *Server) RenewToken(ctx context.Context, r *pb.RenewTokenRequest) (*pb.RenewTokenResponse, error) {
	return call[*pb.RenewTokenResponse](ctx, s, statemachine.RenewToken, r)
}

// RevokeToken implements MetaService.
func (s *Server) RevokeToken(ctx context.Context, r *pb.RevokeTokenRequest) (*pb.RevokeTokenResponse, error) {
	return call[*pb.RevokeTokenResponse](ctx, s, statemachine.RevokeToken, r)
}

// WhoAmI implements MetaService.
func (s *Server) WhoAmI(ctx context.Context, _ *pb.WhoAmIRequest) (*pb.WhoAmIResponse, error) {
	id, err := s.identify(ctx)
	if err != nil {
		return nil, err
	}
	if id == nil {
		return nil, fserr.Errorf(fserr.ErrUnsupported, "authentication is off (--insecure-no-auth): the caller is whoever a request says")
	}
	return &pb.WhoAmIResponse{User: id.caller.User, Groups: id.caller.Groups, Token: id.token,
		Superuser: s.machine.FS().IsSuperuser(id.caller)}, nil
}

// AdminTokenTTL is how long the admin tokens the service writes for its
// superuser are valid (Config.AdminTokenFile).
const AdminTokenTTL = 30 * 24 * time.Hour

// AdminToken returns a token of the superuser that this service accepts:
// the one in Config.AdminTokenFile, or a new one, which it writes there
// (readable by its owner only). A leader calls it when it takes over, so
// that a new cluster's first administrator finds a token in a member's
// data directory.
func (s *Server) AdminToken(ctx context.Context) (string, error) {
	path := s.cfg.AdminTokenFile
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			if t := strings.TrimSpace(string(b)); t != "" {
				if _, err := s.authenticate(t); err == nil {
					return t, nil
				}
			}
		}
	}
	t, err := s.IssueToken(ctx, s.cfg.Namespace.Superuser, nil, AdminTokenTTL)
	if err != nil || path == "" {
		return t, err
	}
	return t, token.WriteFile(path, t)
}

// leaderAuth is the leader's part when it takes over (and then now and
// then): a signing key if the state has none, and the admin token file.
func (s *Server) leaderAuth(ctx context.Context) error {
	if !s.isLeader() {
		return nil
	}
	err := s.ensureTokenKey(ctx)
	if err == nil && s.cfg.AdminTokenFile != "" && !s.cfg.NoAuth {
		_, err = s.AdminToken(ctx)
	}
	if err == nil {
		err = s.forgetTokens(ctx)
	}
	if errors.Is(err, raftnode.ErrNotLeader) || errors.Is(err, fserr.ErrNotLeader) {
		return nil // it lost the lead meanwhile: the next leader does it
	}
	return err
}

// tokenMemory is how long past its max date a token's record is kept
// (for `admin token show`, and a clock a little behind), before the leader
// removes it.
const tokenMemory = 24 * time.Hour

// forgetTokens removes the records of tokens past their max date by more
// than tokenMemory, in bounded commands.
func (s *Server) forgetTokens(ctx context.Context) error {
	const batch = 1000
	before := s.cfg.Clock().Add(-tokenMemory).UnixMilli()
	for s.isLeader() {
		var past []uint64
		if err := s.store.View(func(r kv.Reader) (err error) {
			past, err = statemachine.TokensPast(r, before, 1)
			return err
		}); err != nil || len(past) == 0 {
			return err
		}
		cmd := statemachine.ForgetTokens.Command(&pb.ForgetTokensCommand{Before: before, Limit: batch})
		if _, err := s.propose(ctx, cmd); err != nil {
			return err
		}
	}
	return nil
}

// Authenticate returns the user token t proves, or why this service
// refuses it (fserr.ErrUnauthenticated).
func (s *Server) Authenticate(t string) (string, error) {
	id, err := s.authenticate(t)
	if err != nil {
		return "", err
	}
	return id.caller.User, nil
}

// Superuser returns the service's superuser.
func (s *Server) Superuser() string { return s.cfg.Namespace.Superuser }
