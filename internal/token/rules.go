package token

import (
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
)

// What a new token may carry: the names of its user and groups, and its
// lifetimes. The service checks both before it proposes a token (and so
// before anything reaches the log); the CLI checks them too, to say which
// flag is wrong.

// MaxNameLen bounds a user's or a group's name, in bytes.
const MaxNameLen = 256

// ErrBadName is a user or group name that a token cannot carry.
var ErrBadName = errors.New("not a valid user or group name")

// CheckName checks that name may be a token's user or group: 1 to
// MaxNameLen bytes of UTF-8, printable characters only (no control or
// formatting characters, which would make one name look like another in
// a listing or a log), no white space, and neither ':', which separates
// owner and group in chown's OWNER:GROUP, nor ',', which separates the
// groups of a list (--groups, and HDFS's). HDFS checks less; these are
// the names a Linux or Kerberos short name can be.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: it is empty", ErrBadName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrBadName, len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q is not UTF-8", ErrBadName, name)
	}
	for i, r := range name {
		switch {
		case unicode.IsSpace(r):
			return fmt.Errorf("%w: %q has white space at byte %d", ErrBadName, name, i)
		case !unicode.IsGraphic(r):
			return fmt.Errorf("%w: %q has a control or unprintable character at byte %d", ErrBadName, name, i)
		case r == ':' || r == ',':
			return fmt.Errorf("%w: %q has a %q, which separates names", ErrBadName, name, r)
		}
	}
	return nil
}

// A new token's lifetimes when a request leaves them unset, HDFS's
// (dfs.namenode.delegation.token.renew-interval and max-lifetime).
const (
	DefaultTTL         = 24 * time.Hour
	DefaultMaxLifetime = 7 * 24 * time.Hour
)

// ErrLifetime is a ttl that a token's max lifetime cannot hold.
var ErrLifetime = errors.New("invalid token lifetime")

// Lifetimes returns the ttl and the max lifetime of a new token from those
// asked for (0: the default). A token is never valid past its max date,
// which renewals cannot pass: so a ttl asked for that is longer than the
// max lifetime is refused, and the default ttl is cut to the max lifetime.
func Lifetimes(ttl, maxLife time.Duration) (time.Duration, time.Duration, error) {
	if ttl < 0 || maxLife < 0 {
		return 0, 0, fmt.Errorf("%w: a ttl of %v and a max lifetime of %v: neither may be negative", ErrLifetime, ttl, maxLife)
	}
	if maxLife == 0 {
		maxLife = DefaultMaxLifetime
	}
	if ttl == 0 {
		return min(DefaultTTL, maxLife), maxLife, nil
	}
	if ttl > maxLife {
		return 0, 0, fmt.Errorf("%w: a ttl of %v is longer than the max lifetime, %v, past which no token is valid", ErrLifetime, ttl, maxLife)
	}
	return ttl, maxLife, nil
}
