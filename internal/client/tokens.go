package client

import (
	"context"
	"time"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Tokens (docs/security.md): what `strata admin token` asks.

// CreateToken issues a token for user and groups (superusers only), valid
// for ttl and renewable up to maxLifetime after its issue (0: the
// service's defaults, 24 hours and 7 days).
func (c *Client) CreateToken(ctx context.Context, user string, groups []string, ttl, maxLifetime time.Duration,
	renewable bool) (*pb.CreateTokenResponse, error) {
	return call(func() (*pb.CreateTokenResponse, error) {
		return c.meta.CreateToken(ctx, &pb.CreateTokenRequest{Header: c.header, User: user, Groups: groups,
			TtlMs: ttl.Milliseconds(), MaxLifetimeMs: maxLifetime.Milliseconds(), NotRenewable: !renewable})
	})
}

// RenewToken extends token tok (empty: the client's own) by its lifetime,
// up to its max date, and returns its new expiry.
func (c *Client) RenewToken(ctx context.Context, tok string) (time.Time, error) {
	if tok == "" {
		tok = c.cfg.Token
	}
	r, err := call(func() (*pb.RenewTokenResponse, error) {
		return c.meta.RenewToken(ctx, &pb.RenewTokenRequest{Header: c.header, Token: tok})
	})
	return time.UnixMilli(r.GetExpires()), err
}

// RevokeToken revokes token id, or token tok if it is not empty; it
// reports false when it was revoked already.
func (c *Client) RevokeToken(ctx context.Context, id uint64, tok string) (bool, error) {
	r, err := call(func() (*pb.RevokeTokenResponse, error) {
		return c.meta.RevokeToken(ctx, &pb.RevokeTokenRequest{Header: c.header, Id: id, Token: tok})
	})
	return r.GetRevoked(), err
}

// WhoAmI returns who the service takes the client for.
func (c *Client) WhoAmI(ctx context.Context) (*pb.WhoAmIResponse, error) {
	return call(func() (*pb.WhoAmIResponse, error) {
		return c.meta.WhoAmI(ctx, &pb.WhoAmIRequest{})
	})
}
