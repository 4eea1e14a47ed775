package fusefs

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// Identity gives the client that makes a request's calls as its caller,
// so that the namespace service checks each request's permissions as the
// user who made it. Implementations are safe for concurrent use.
type Identity interface {
	// Client returns the client acting for the process uid (of primary
	// group gid); an error refuses the request with EACCES and says why
	// in the mount's log.
	Client(uid, gid uint32) (*client.Client, error)
	// Close closes every client made.
	Close() error
}

// One is the identity of a mount that only its owner may use (the kernel
// refuses every other user's requests, as FUSE does without allow_other):
// every request is made with one client, the mount owner's.
type One struct{ C *client.Client }

// Client returns the one client.
func (o One) Client(uint32, uint32) (*client.Client, error) { return o.C, nil }

// Close closes it.
func (o One) Close() error { return o.C.Close() }

// perUser makes one client per calling uid, lazily, with cfg's settings
// and what make returns for that user.
type perUser struct {
	cfg  client.Config
	make func(u *user.User, cfg *client.Config) error
	mu   struct {
		sync.Mutex
		clients map[uint32]*client.Client
	}
}

func newPerUser(cfg client.Config, mk func(u *user.User, cfg *client.Config) error) *perUser {
	p := &perUser{cfg: cfg, make: mk}
	p.mu.clients = map[uint32]*client.Client{}
	return p
}

func (p *perUser) Client(uid, _ uint32) (*client.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.mu.clients[uid]; c != nil {
		return c, nil
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return nil, fserr.Errorf(fserr.ErrPermission, "uid %d: no such local user: %v", uid, err)
	}
	cfg := p.cfg
	if err := p.make(u, &cfg); err != nil {
		return nil, err
	}
	c, err := client.New(cfg)
	if err != nil {
		return nil, err
	}
	p.mu.clients[uid] = c
	return c, nil
}

func (p *perUser) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.mu.clients {
		c.Close()
	}
	p.mu.clients = map[uint32]*client.Client{}
	return nil
}

// TokenDir is the identity of a mount shared by several local users: the
// caller with uid U acts with the token in dir/<U's user name>, which the
// service signed for that user (strata admin token create --user NAME). A
// user without a token file there is refused (EACCES), never mapped to
// another identity. The files must be readable by the mount's user only,
// as the mount runs as root and reads them for everyone.
func TokenDir(dir string, cfg client.Config) Identity {
	return newPerUser(cfg, func(u *user.User, cfg *client.Config) error {
		path := filepath.Join(dir, u.Username)
		fi, err := os.Stat(path)
		if err != nil {
			return fserr.Errorf(fserr.ErrPermission, "user %s (uid %s) has no token in %s", u.Username, u.Uid, dir)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return fserr.Errorf(fserr.ErrPermission, "the token file %s may be read by others (mode %o): chmod 600 it", path, fi.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fserr.Errorf(fserr.ErrPermission, "the token file %s: %v", path, err)
		}
		cfg.Token = strings.TrimSpace(string(b))
		return nil
	})
}

// CallerNames is the identity of a mount over a service started with
// --insecure-no-auth, which believes the user and groups a request names:
// each caller names its local user and groups. For tests and a single
// trusted host only; a service with authentication refuses every call.
func CallerNames(cfg client.Config) Identity {
	return newPerUser(cfg, func(u *user.User, cfg *client.Config) error {
		cfg.Token = ""
		cfg.User, cfg.Groups = u.Username, groupNames(u)
		return nil
	})
}

func groupNames(u *user.User) []string {
	ids, err := u.GroupIds()
	if err != nil {
		ids = []string{u.Gid}
	}
	var out []string
	for _, id := range ids {
		if g, err := user.LookupGroupId(id); err == nil {
			out = append(out, g.Name)
		} else {
			out = append(out, id)
		}
	}
	return out
}
