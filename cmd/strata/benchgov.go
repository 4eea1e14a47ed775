package main

import (
	"context"
	"errors"

	"github.com/stratafs/strata/bench/metabench"
	"github.com/stratafs/strata/internal/client"
)

// The limits a --governed run puts on its base directory: far above what
// a run makes, so that every create and rename is checked against them
// and none is refused.
const (
	governedNames = 1 << 40
	governedSpace = 1 << 50
)

// validateEmbeddedUser checks --embedded-user and --governed against the
// other flags.
func (f *benchMetaFlags) validateEmbeddedUser() error {
	switch {
	case f.governed && f.embeddedUser == "":
		return usagef("--governed needs --embedded-user")
	case f.inheritACL && !f.governed:
		return usagef("--inherit-acl needs --governed")
	case f.embeddedUser != "" && (!f.embedded || f.noAuth):
		return usagef("--embedded-user needs --embedded, with authentication")
	}
	return nil
}

// asEmbeddedUser makes the run's clients act as --embedded-user, and sets
// cfg.Prepare to make the base directory theirs: with --governed the
// superuser keeps it (mode 0700) under a name and a space quota and lets
// the user in by a named-user entry of its ACL, so that every create and
// rename of the run passes the quota checks and the ACL checker; with
// --inherit-acl a default ACL too, which every file and directory of the
// run inherits (an ACL stored with each). The superuser's client
// (admin) is closed by the returned function.
func (f *benchMetaFlags) asEmbeddedUser(ctx context.Context, emb *metabench.Embedded, cfg *metabench.Config) (func(), error) {
	tok, err := emb.TokenFor(ctx, f.embeddedUser)
	if err != nil {
		return nil, err
	}
	admins, err := f.clientsN(emb.Addr(), f.ns, emb.Token(), 1)
	if err != nil {
		return nil, err
	}
	if cfg.Clients, err = f.clientsN(emb.Addr(), f.ns, tok, f.conns); err != nil {
		closeClients(admins)
		return nil, err
	}
	admin, user := admins[0], f.embeddedUser
	cfg.Prepare = func(ctx context.Context, dir string) error {
		if _, err := admin.Mkdirs(ctx, dir, 0o755); err != nil {
			return err
		}
		if !f.governed {
			return admin.SetOwner(ctx, dir, user, "")
		}
		rwx := uint8(7)
		acl := []client.ACLEntry{{Type: client.ACLUser, Name: user, Perm: rwx}}
		if f.inheritACL {
			acl = append(acl, client.ACLEntry{Default: true, Type: client.ACLUser, Perm: rwx},
				client.ACLEntry{Default: true, Type: client.ACLUser, Name: user, Perm: rwx},
				client.ACLEntry{Default: true, Type: client.ACLGroup, Perm: 5},
				client.ACLEntry{Default: true, Type: client.ACLOther, Perm: 0})
		}
		return errors.Join(admin.SetPermission(ctx, dir, 0o700),
			admin.SetQuota(ctx, dir, governedNames, governedSpace),
			admin.ModifyACL(ctx, dir, client.ACLModify, acl))
	}
	// The user may not remove the superuser's base directory; the
	// embedded member's data goes with it anyway.
	cfg.Keep = true
	return func() { closeClients(admins) }, nil
}
