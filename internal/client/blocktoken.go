package client

import (
	pb "github.com/stratafs/strata/proto/strata/v1"

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
	// objects are the tokens of the other inodes whose prefixes hold
	// objects of the file's blocks (blocks a concat moved), by inode.
	objects map[uint64][]byte
}

func (t *blockToken) set(b []byte, expires int64) { t.setWith(b, expires, nil) }

// setWith sets the file's token and its objects' (OpenResponse's).
func (t *blockToken) setWith(b []byte, expires int64, objects []*pb.ObjectToken) {
	if len(b) == 0 {
		return
	}
	v := &tokenValue{b: b, expires: expires}
	if len(objects) > 0 {
		v.objects = make(map[uint64][]byte, len(objects))
		for _, o := range objects {
			v.objects[o.GetInodeId()] = o.GetToken()
		}
	}
	t.v.Store(v)
}

func (t *blockToken) get() []byte {
	if v := t.v.Load(); v != nil {
		return v.b
	}
	return nil
}

// object is the token of the objects under inode ino.
func (t *blockToken) object(ino uint64) []byte {
	if v := t.v.Load(); v != nil {
		return v.objects[ino]
	}
	return nil
}

// due reports whether the token expires within tokenRenewal.
func (t *blockToken) due() bool {
	v := t.v.Load()
	return v != nil && time.Until(time.UnixMilli(v.expires)) < tokenRenewal
}
