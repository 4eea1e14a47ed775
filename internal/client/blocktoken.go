package client

import (
	"sync"
	"sync/atomic"
	"time"
)

// tokenRenewal is how long before its expiry a block access token is
// renewed, so that a file read or written for longer than a token lives
// goes on being read or written.
const tokenRenewal = time.Minute

// blockToken is a file's block access token (docs/security.md), which the
// worker checks on every request for the file's blocks. It is replaced as
// it is renewed: a reader's by opening the file again, a writer's by each
// flush's answer, and by a flush of nothing before a block's stream when it
// is due (Writer.renewToken).
type blockToken struct {
	v     atomic.Pointer[tokenValue]
	renew sync.Mutex // one renewal at a time
}

type tokenValue struct {
	b       []byte
	expires int64 // ms since the epoch
}

func (t *blockToken) set(b []byte, expires int64) {
	if len(b) > 0 {
		t.v.Store(&tokenValue{b: b, expires: expires})
	}
}

func (t *blockToken) get() []byte {
	if v := t.v.Load(); v != nil {
		return v.b
	}
	return nil
}

// due reports whether the token expires within tokenRenewal.
func (t *blockToken) due() bool {
	v := t.v.Load()
	return v != nil && time.Until(time.UnixMilli(v.expires)) < tokenRenewal
}
