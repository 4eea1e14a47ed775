// Package token is the format of Strata's tokens, the credentials with which
// a client proves who it is to the namespace service (docs/security.md):
// encoding, signing and checking a token's signature, and, for clients,
// finding a token ($STRATA_TOKEN or a token file) and sending it with every
// call. It is not the service's judgement of a token (expiry, revocation:
// internal/metaserver) nor where the service keeps its keys.
//
// A token is "st1." + base64url(identifier) + "." + base64url(password),
// unpadded: the identifier is a strata.v1.TokenIdentifier (the user, groups,
// expiry, which key signed it), readable by anyone; the password is the
// HMAC-SHA256 of the identifier's bytes under that key, which only the
// service holds. The shape is HDFS's delegation token. A token has one
// text: Parse refuses any other spelling of the same bytes (a last base64
// character with other unused bits, a line break inside), so that a token
// changed in any character is a token refused.
package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// prefix starts every token: the format's version.
const prefix = "st1."

// MaxLen bounds a token's length: longer strings are refused before they
// are decoded.
const MaxLen = 8 << 10

// SecretLen is the length of the keys the service draws.
const SecretLen = 32

// ErrMalformed is a string that is not a token.
var ErrMalformed = errors.New("not a Strata token")

// b64 is the tokens' base64: URL-safe, unpadded and strict, which refuses
// a last character whose bits past the data are not zero; the lenient
// decoding drops them, and read a token with its last character changed
// as the token itself.
var b64 = base64.RawURLEncoding.Strict()

// decode decodes the base64 of a token's part.
func decode(s string) ([]byte, error) {
	// NB: even a strict decoder skips line breaks.
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return nil, fmt.Errorf("a line break at %d", i)
	}
	return b64.DecodeString(s)
}

// Token is a decoded token: the identifier's bytes as sent (the signature
// covers those, not a re-encoding), the identifier, and the password.
type Token struct {
	Raw      []byte
	ID       *pb.TokenIdentifier
	Password []byte
}

// Parse decodes s. It checks the form only: whether the service signed it
// is Verify's question.
func Parse(s string) (*Token, error) {
	s = strings.TrimSpace(s)
	if len(s) > MaxLen {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrMalformed, len(s), MaxLen)
	}
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return nil, fmt.Errorf("%w: it does not start with %q", ErrMalformed, prefix)
	}
	ident, pass, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, fmt.Errorf("%w: no signature", ErrMalformed)
	}
	raw, err := decode(ident)
	if err != nil {
		return nil, fmt.Errorf("%w: identifier: %v", ErrMalformed, err)
	}
	password, err := decode(pass)
	if err != nil {
		return nil, fmt.Errorf("%w: signature: %v", ErrMalformed, err)
	}
	if len(password) != sha256.Size {
		return nil, fmt.Errorf("%w: the signature is %d bytes, not %d", ErrMalformed, len(password), sha256.Size)
	}
	id := &pb.TokenIdentifier{}
	if err := proto.Unmarshal(raw, id); err != nil {
		return nil, fmt.Errorf("%w: identifier: %v", ErrMalformed, err)
	}
	if id.GetUser() == "" || id.GetId() == 0 {
		return nil, fmt.Errorf("%w: the identifier names no user or id", ErrMalformed)
	}
	return &Token{Raw: raw, ID: id, Password: password}, nil
}

// Sign returns the token of id signed with secret.
func Sign(id *pb.TokenIdentifier, secret []byte) (string, error) {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(id)
	if err != nil {
		return "", err
	}
	return (&Token{Raw: raw, Password: password(raw, secret)}).String(), nil
}

// String returns t's text: for a token Parse returned, what it parsed,
// less the white space around it.
func (t *Token) String() string {
	return prefix + b64.EncodeToString(t.Raw) + "." + b64.EncodeToString(t.Password)
}

// Verify reports whether t was signed with secret.
func (t *Token) Verify(secret []byte) bool {
	return len(secret) > 0 && hmac.Equal(t.Password, password(t.Raw, secret))
}

func password(raw, secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(raw)
	return m.Sum(nil)
}
