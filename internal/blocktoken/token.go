// Package blocktoken is the block access token: the namespace service's
// signed permission to read or write the blocks of one file, which a
// worker checks on every Read, Write, Load and short-circuit request. It
// encodes, signs, decodes and verifies tokens, and derives the rotating
// keys they are signed with from one cluster secret.
//
// It is not authentication: a token says what may be done with a file's
// blocks, to whoever holds it, for a short while; who asked for it is the
// service's business when it hands it out.
//
// Token format (all integers big-endian):
//
//	version    1 byte (1)
//	key id     4 bytes: the Key that signed it
//	expires    8 bytes: milliseconds since the epoch
//	mode       1 byte: 1 read, 2 write, 3 cache
//	inode      8 bytes: the file's inode id
//	namespace  uvarint length + bytes ("default" for the default namespace)
//	object     uvarint length + bytes: cache mode's object key, or empty
//	policy     1 byte, in version 2 only: the file's storage policy
//	           (internal/storagepolicy), which says whether the workers
//	           pin its blocks, cache them, and in which storage class the
//	           bucket keeps them; version 1 (which a token of the default
//	           policy still is) has none
//	mac        32 bytes: HMAC-SHA256 with the key's secret of all the above
package blocktoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// DefaultNamespace is the name a token carries for the namespace of a
// request that names none: the service's default namespace.
const DefaultNamespace = "default"

// NamespaceOf is the name a token carries for namespace ns as a request
// names it ("" is the default).
func NamespaceOf(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}

// Mode is what a token allows.
type Mode uint8

// The modes. Cache is a superuser's: it lets a worker load a file's blocks
// into its cache and drop them (strata admin load and uncache), and read
// them, since a load is a read.
const (
	Read  Mode = 1
	Write Mode = 2
	Cache Mode = 3
)

func (m Mode) String() string {
	switch m {
	case Read:
		return "read"
	case Write:
		return "write"
	case Cache:
		return "cache"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Token is the content of a block access token.
type Token struct {
	KeyID   uint32
	Expires int64 // milliseconds since the epoch
	Mode    Mode
	// Namespace is the namespace's name, "default" for the default one.
	Namespace string
	Inode     uint64
	// Object is the file's object key in cache mode, empty in block mode.
	Object string
	// Policy is the file's storage policy; 0 is the default's.
	Policy uint8
}

// Key signs tokens. Its secret is derived from the cluster secret (see
// Keyring); workers get keys, never the cluster secret.
type Key struct {
	ID      uint32
	Secret  []byte
	Expires int64 // milliseconds since the epoch: no token it signed is valid after
}

const (
	version       = 1
	policyVersion = 2 // a token with a policy
	macLen        = sha256.Size
	// maxField bounds the namespace and object fields.
	maxField = 4096
)

// Errors of Decode and Verify. Each is a reason to refuse the request.
var (
	ErrMissing    = errors.New("no block access token")
	ErrMalformed  = errors.New("malformed block access token")
	ErrUnknownKey = errors.New("block access token signed with an unknown key")
	ErrForged     = errors.New("block access token with a bad signature")
	ErrExpired    = errors.New("expired block access token")
)

// Sign returns the encoded token t signed with k (t.KeyID is set to k.ID).
func Sign(t Token, k Key) []byte {
	t.KeyID = k.ID
	b := make([]byte, 0, 32+len(t.Namespace)+len(t.Object)+macLen)
	v := byte(version)
	if t.Policy != 0 {
		v = policyVersion
	}
	b = append(b, v)
	b = binary.BigEndian.AppendUint32(b, t.KeyID)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Expires))
	b = append(b, byte(t.Mode))
	b = binary.BigEndian.AppendUint64(b, t.Inode)
	b = binary.AppendUvarint(b, uint64(len(t.Namespace)))
	b = append(b, t.Namespace...)
	b = binary.AppendUvarint(b, uint64(len(t.Object)))
	b = append(b, t.Object...)
	if t.Policy != 0 {
		b = append(b, t.Policy)
	}
	return append(b, mac(k.Secret, b)...)
}

func mac(secret, msg []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(msg)
	return h.Sum(nil)
}

// Decode parses b without checking its signature; the second result is
// the signed part and the third the signature.
func Decode(b []byte) (Token, []byte, []byte, error) {
	var t Token
	if len(b) == 0 {
		return t, nil, nil, ErrMissing
	}
	if len(b) < 1+4+8+1+8+2+macLen || b[0] != version && b[0] != policyVersion {
		return t, nil, nil, ErrMalformed
	}
	body, sig := b[:len(b)-macLen], b[len(b)-macLen:]
	p := body[1:]
	t.KeyID = binary.BigEndian.Uint32(p)
	t.Expires = int64(binary.BigEndian.Uint64(p[4:]))
	t.Mode = Mode(p[12])
	t.Inode = binary.BigEndian.Uint64(p[13:])
	p = p[21:]
	var ok bool
	if t.Namespace, p, ok = field(p); !ok {
		return Token{}, nil, nil, ErrMalformed
	}
	if t.Object, p, ok = field(p); !ok {
		return Token{}, nil, nil, ErrMalformed
	}
	if body[0] == policyVersion {
		// NB: a policy of 0 is written as version 1, so that a token has
		// one encoding.
		if len(p) == 0 || p[0] == 0 {
			return Token{}, nil, nil, ErrMalformed
		}
		t.Policy, p = p[0], p[1:]
	}
	if len(p) != 0 {
		return Token{}, nil, nil, ErrMalformed
	}
	if t.Mode < Read || t.Mode > Cache {
		return Token{}, nil, nil, ErrMalformed
	}
	return t, body, sig, nil
}

func field(p []byte) (string, []byte, bool) {
	n, w := binary.Uvarint(p)
	// NB: only the shortest encoding of a length is valid, so that a token
	// has one encoding.
	if w <= 0 || w != len(binary.AppendUvarint(nil, n)) || n > maxField || n > uint64(len(p)-w) {
		return "", nil, false
	}
	return string(p[w : w+int(n)]), p[w+int(n):], true
}

// Verify decodes b and checks its signature with the key it names, looked
// up with key (false: unknown), and that it has not expired at now (ms).
func Verify(b []byte, now int64, key func(id uint32) (Key, bool)) (Token, error) {
	t, body, sig, err := Decode(b)
	if err != nil {
		return Token{}, err
	}
	k, ok := key(t.KeyID)
	if !ok {
		return Token{}, ErrUnknownKey
	}
	if !hmac.Equal(sig, mac(k.Secret, body)) {
		return Token{}, ErrForged
	}
	if now > t.Expires || now > k.Expires {
		return Token{}, ErrExpired
	}
	return t, nil
}

// Allows reports why t does not allow mode on the file (namespace, inode,
// object), or nil if it does.
func (t Token) Allows(mode Mode, namespace string, inode uint64, object string) error {
	switch {
	case t.Mode != mode && (t.Mode != Cache || mode != Read):
		return fmt.Errorf("the block access token is for %s, not %s", t.Mode, mode)
	case t.Namespace != namespace || t.Inode != inode || t.Object != object:
		return fmt.Errorf("the block access token is for another file (namespace %q, inode %d)", t.Namespace, t.Inode)
	}
	return nil
}
