package blocktoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// Keyring derives the keys tokens are signed with from the cluster secret:
// the key of period e (time since the epoch divided by the period) is
// HMAC-SHA256(secret, "strata block key" || e), valid until the end of
// period e+1. Every member with the secret derives the same keys, so a new
// leader signs tokens the workers accept, and no key needs to be stored or
// sent between members.
//
// A token lives at most one period (Lifetime is capped to it), so that the
// previous key still verifies every token signed in the previous period: a
// worker holding the previous, current and next keys accepts every valid
// token whatever the clocks' skew within a period.
type Keyring struct {
	Secret []byte
	Period time.Duration
}

// DefaultPeriod is how often keys rotate, and the longest a token lives.
const DefaultPeriod = time.Hour

func (r Keyring) period() int64 {
	if r.Period <= 0 {
		return DefaultPeriod.Milliseconds()
	}
	return max(r.Period.Milliseconds(), 1)
}

// Key returns the key of period id.
func (r Keyring) Key(id uint32) Key {
	h := hmac.New(sha256.New, r.Secret)
	h.Write([]byte("strata block key"))
	h.Write(binary.BigEndian.AppendUint32(nil, id))
	return Key{ID: id, Secret: h.Sum(nil), Expires: (int64(id) + 2) * r.period()}
}

// Current returns the key to sign with at now (ms since the epoch).
func (r Keyring) Current(now int64) Key { return r.Key(uint32(now / r.period())) }

// Around returns the previous, current and next keys at now: what a
// worker needs to verify tokens signed by any member.
func (r Keyring) Around(now int64) []Key {
	cur := uint32(now / r.period())
	return []Key{r.Key(cur - 1), r.Key(cur), r.Key(cur + 1)}
}

// Issue returns a token for the file, valid for lifetime (at most a
// period) from now, signed with the current key.
func (r Keyring) Issue(now int64, lifetime time.Duration, mode Mode, namespace string, inode uint64, object string) ([]byte, int64) {
	return r.IssueToken(now, lifetime, Token{Mode: mode, Namespace: namespace, Inode: inode, Object: object})
}

// IssueToken is Issue of t, whose key and expiry it sets.
func (r Keyring) IssueToken(now int64, lifetime time.Duration, t Token) ([]byte, int64) {
	life := min(lifetime.Milliseconds(), r.period())
	if life <= 0 {
		life = r.period()
	}
	t.Expires = now + life
	return Sign(t, r.Current(now)), t.Expires
}
