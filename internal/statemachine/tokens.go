package statemachine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Tokens (docs/security.md). The service signs tokens with a key kept in
// the state (the cluster secret "token-key/ID", recorded by SetSecret), so
// that every member verifies what any leader issued, and
// keeps a record of each token it issued, which renewals extend and
// revocations mark. Signing is an HMAC of the identifier, a pure function
// of the state and the command: apply may do it.

// Token lifetimes when a request leaves them unset, in milliseconds
// (token.Lifetimes; the service fills them in before it proposes).
const (
	DefaultTokenTTL         = int64(token.DefaultTTL / time.Millisecond)
	DefaultTokenMaxLifetime = int64(token.DefaultMaxLifetime / time.Millisecond)
)

// The token operations.
var (
	CreateToken = mutation(Op{Name: "CreateToken", Tokens: true},
		func(r *pb.CreateTokenRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_CreateToken{CreateToken: r}}
		},
		(*pb.Command).GetCreateToken, applyCreateToken,
		func(text string) *pb.CreateTokenResponse {
			resp := &pb.CreateTokenResponse{Token: text}
			if t, err := token.Parse(resp.Token); err == nil {
				resp.Identifier = t.ID
			}
			return resp
		}, keptNothing[string]())
	RenewToken = mutation(Op{Name: "RenewToken", Tokens: true},
		func(r *pb.RenewTokenRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_RenewToken{RenewToken: r}}
		},
		(*pb.Command).GetRenewToken, applyRenewToken,
		func(expires int64) *pb.RenewTokenResponse { return &pb.RenewTokenResponse{Expires: expires} },
		keptNothing[int64]())
	RevokeToken = mutation(Op{Name: "RevokeToken", Tokens: true},
		func(r *pb.RevokeTokenRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_RevokeToken{RevokeToken: r}}
		},
		(*pb.Command).GetRevokeToken, applyRevokeToken,
		func(revoked bool) *pb.RevokeTokenResponse { return &pb.RevokeTokenResponse{Revoked: revoked} }, keptFlag)
	// ForgetTokens removes records of tokens past their max date, which
	// the leader proposes (metaserver's token upkeep): a token is refused
	// past its max date with or without its record.
	ForgetTokens = internal(Op{Name: "ForgetTokens", Tokens: true},
		func(c *pb.ForgetTokensCommand) *pb.Command {
			return &pb.Command{Op: &pb.Command_ForgetTokens{ForgetTokens: c}}
		},
		(*pb.Command).GetForgetTokens,
		func(_ env, tx kv.Txn, c *pb.ForgetTokensCommand) (int, error) {
			ids, err := TokensPast(tx, c.GetBefore(), int(c.GetLimit()))
			for _, id := range ids {
				tx.Delete(kvschema.TokenRecordKey(id))
			}
			return len(ids), err
		})
)

// TokensPast returns the ids of at most limit tokens whose max date is
// before before.
func TokensPast(r kv.Reader, before int64, limit int) ([]uint64, error) {
	var ids []uint64
	err := scanTokenRecords(r, func(rec *kvschema.TokenRecord) bool {
		if rec.MaxDate < before {
			ids = append(ids, rec.ID)
		}
		return len(ids) < limit
	})
	return ids, err
}

// scanTokenRecords calls fn with each token record in id order until fn
// returns false; a record that does not decode stops the scan with its
// error.
func scanTokenRecords(r kv.Reader, fn func(*kvschema.TokenRecord) bool) error {
	start, end := kvschema.TokenRecordRange()
	var derr error
	err := r.Scan(start, end, func(k, v []byte) bool {
		rec, err := kvschema.DecodeTokenRecord(k, v)
		if err != nil {
			derr = err
			return false
		}
		return fn(rec)
	})
	return errors.Join(err, derr)
}

// tokenKeyPrefix names the signing keys among the cluster secrets:
// "token-key/ID", ID in decimal.
const tokenKeyPrefix = "token-key/"

// TokenKeySecret is the name of the cluster secret that is signing key id.
func TokenKeySecret(id uint32) string { return tokenKeyPrefix + strconv.FormatUint(uint64(id), 10) }

func tokenErr(op, what string, err error) error {
	return &namespace.PathError{Op: op + "Token", Path: what, Err: err}
}

func applyCreateToken(e env, tx kv.Txn, r *pb.CreateTokenRequest) (string, error) {
	c := CallerOf(r.GetHeader())
	switch {
	case !e.fs.IsSuperuser(c):
		return "", tokenErr("create", r.GetUser(),
			fserr.Errorf(fserr.ErrPermission, "only a superuser may issue tokens (%s is not one)", c.User))
	case r.GetUser() == "" || r.GetTtlMs() < 0 || r.GetMaxLifetimeMs() < 0:
		return "", tokenErr("create", r.GetUser(),
			fserr.Errorf(fserr.ErrInvalidArgument, "a token needs a user and lifetimes of 0 or more"))
	}
	keyID, secret, err := currentKey(tx)
	if err != nil {
		return "", err
	}
	id, err := nextTokenID(tx)
	if err != nil {
		return "", err
	}
	ttl, maxLife := or(r.GetTtlMs(), DefaultTokenTTL), or(r.GetMaxLifetimeMs(), DefaultTokenMaxLifetime)
	rec := &kvschema.TokenRecord{ID: id, User: r.GetUser(), Groups: r.GetGroups(), Issued: e.now,
		Expires: e.now + ttl, MaxDate: e.now + max(ttl, maxLife), Renewable: !r.GetNotRenewable()}
	tx.Set(kvschema.TokenRecordKey(id), kvschema.EncodeTokenRecord(rec))
	return token.Sign(&pb.TokenIdentifier{KeyId: keyID, Id: id, Cluster: r.GetCluster(), User: rec.User,
		Groups: rec.Groups, Issued: rec.Issued, Expires: rec.Expires, MaxDate: rec.MaxDate, Renewable: rec.Renewable}, secret)
}

func or(v, dflt int64) int64 {
	if v == 0 {
		return dflt
	}
	return v
}

func applyRenewToken(e env, tx kv.Txn, r *pb.RenewTokenRequest) (int64, error) {
	t, rec, err := ownToken(e, tx, "renew", CallerOf(r.GetHeader()), r.GetToken(), 0)
	if err != nil {
		return 0, err
	}
	what := fmt.Sprint(rec.ID)
	switch {
	case !rec.Renewable:
		return 0, tokenErr("renew", what, fserr.Errorf(fserr.ErrInvalidArgument, "the token is not renewable"))
	case rec.Revoked != 0 || e.now > rec.Expires:
		return 0, tokenErr("renew", what, fserr.Errorf(fserr.ErrPermission, "the token was revoked or expired"))
	}
	rec.Expires = min(e.now+(t.ID.GetExpires()-t.ID.GetIssued()), rec.MaxDate)
	tx.Set(kvschema.TokenRecordKey(rec.ID), kvschema.EncodeTokenRecord(rec))
	return rec.Expires, nil
}

func applyRevokeToken(e env, tx kv.Txn, r *pb.RevokeTokenRequest) (bool, error) {
	_, rec, err := ownToken(e, tx, "revoke", CallerOf(r.GetHeader()), r.GetToken(), r.GetId())
	if err != nil || rec.Revoked != 0 {
		return false, err
	}
	rec.Revoked = e.now
	tx.Set(kvschema.TokenRecordKey(rec.ID), kvschema.EncodeTokenRecord(rec))
	return true, nil
}

// ownToken returns the record of the token s (or, if s is empty, of token
// id), which c must own or be a superuser to act on; a token given must be
// one the service signed.
func ownToken(e env, tx kv.Txn, op string, c namespace.Caller, s string, id uint64) (*token.Token, *kvschema.TokenRecord, error) {
	var t *token.Token
	if s != "" {
		var err error
		if t, err = token.Parse(s); err != nil {
			return nil, nil, tokenErr(op, "", fserr.Errorf(fserr.ErrInvalidArgument, "%v", err))
		}
		secret, err := tokenSecret(tx, t.ID.GetKeyId())
		if err != nil || !t.Verify(secret) {
			return nil, nil, errors.Join(err, tokenErr(op, fmt.Sprint(t.ID.GetId()),
				fserr.Errorf(fserr.ErrPermission, "the token was not signed by this service")))
		}
		id = t.ID.GetId()
	}
	what := fmt.Sprint(id)
	v, ok, err := tx.Get(kvschema.TokenRecordKey(id))
	switch {
	case err != nil:
		return nil, nil, err
	case !ok:
		return nil, nil, tokenErr(op, what, fserr.Errorf(fserr.ErrNotFound, "no token %d", id))
	}
	rec, err := kvschema.DecodeTokenRecord(kvschema.TokenRecordKey(id), v)
	if err != nil {
		return nil, nil, err
	}
	if rec.User != c.User && !e.fs.IsSuperuser(c) {
		return nil, nil, tokenErr(op, what, fserr.Errorf(fserr.ErrPermission,
			"token %d is %s's: only its user or a superuser may %s it", id, rec.User, op))
	}
	if t == nil {
		t = &token.Token{ID: &pb.TokenIdentifier{Id: id, Issued: rec.Issued, Expires: rec.Expires}}
	}
	return t, rec, nil
}

// currentKey returns the newest signing key.
func currentKey(r kv.Reader) (uint32, []byte, error) {
	keys, err := TokenKeys(r)
	if err != nil {
		return 0, nil, err
	}
	if len(keys) == 0 {
		return 0, nil, tokenErr("create", "", fserr.Errorf(fserr.ErrUnavailable, "the service has no signing key yet"))
	}
	ids := make([]uint32, 0, len(keys))
	for id := range keys {
		ids = append(ids, id)
	}
	id := slices.Max(ids)
	return id, keys[id], nil
}

func tokenSecret(r kv.Reader, id uint32) ([]byte, error) {
	return Secret(r, TokenKeySecret(id))
}

func nextTokenID(tx kv.Txn) (uint64, error) {
	v, ok, err := tx.Get(kvschema.NextTokenKey)
	if err != nil {
		return 0, err
	}
	id := uint64(1)
	if ok {
		vs, err := kvschema.DecodeUint64s(v, 1)
		if err != nil {
			return 0, err
		}
		id = vs[0]
	}
	tx.Set(kvschema.NextTokenKey, kvschema.EncodeUint64s(id+1))
	return id, nil
}

// TokenKeys returns the service's signing keys by id.
func TokenKeys(r kv.Reader) (map[uint32][]byte, error) {
	keys := map[uint32][]byte{}
	start, end := kvschema.SecretRange(tokenKeyPrefix)
	var derr error
	err := r.Scan(start, end, func(k, v []byte) bool {
		id, err := strconv.ParseUint(string(k[len(start):]), 10, 32)
		if err != nil || len(v) < token.SecretLen {
			derr = fmt.Errorf("signing key %q: %w", k[len(start):], kvschema.ErrCorrupt)
			return false
		}
		keys[uint32(id)] = append([]byte(nil), v...)
		return true
	})
	return keys, errors.Join(err, derr)
}

// TokenRecords returns the records of the tokens the service issued whose
// max date is not before now (the others are of no use to anyone).
func TokenRecords(r kv.Reader, now int64) (map[uint64]*kvschema.TokenRecord, error) {
	recs := map[uint64]*kvschema.TokenRecord{}
	err := scanTokenRecords(r, func(rec *kvschema.TokenRecord) bool {
		if rec.MaxDate >= now {
			recs[rec.ID] = rec
		}
		return true
	})
	return recs, err
}
