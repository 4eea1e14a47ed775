package token

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

func sample() *pb.TokenIdentifier {
	return &pb.TokenIdentifier{KeyId: 1, Id: 7, Cluster: "strata", User: "alice", Groups: []string{"g1"},
		Issued: 1000, Expires: 2000, MaxDate: 3000, Renewable: true}
}

func TestSignParseVerify(t *testing.T) {
	secret := bytes.Repeat([]byte{1}, SecretLen)
	s, err := Sign(sample(), secret)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Parse(s + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(tok.ID, sample()) {
		t.Fatalf("parsed %v, signed %v", tok.ID, sample())
	}
	if !tok.Verify(secret) {
		t.Fatal("a token does not verify with the key that signed it")
	}
	if tok.Verify(bytes.Repeat([]byte{2}, SecretLen)) || tok.Verify(nil) {
		t.Fatal("a token verifies with another key")
	}
}

// TestForgedIdentifierFails changes the identifier of a signed token (the
// user, as a forger would): the signature no longer matches.
func TestForgedIdentifierFails(t *testing.T) {
	secret := bytes.Repeat([]byte{1}, SecretLen)
	s, _ := Sign(sample(), secret)
	forged := sample()
	forged.User = "root"
	raw, _ := proto.Marshal(forged)
	parts := strings.Split(s, ".")
	tok, err := Parse(parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + parts[2])
	if err != nil {
		t.Fatal(err)
	}
	if tok.ID.GetUser() != "root" || tok.Verify(secret) {
		t.Fatalf("a forged identifier (user %q) verifies", tok.ID.GetUser())
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for _, s := range []string{"", "alice", "st1.", "st1.AAAA", "st1.!!.AAAA", "st1.AAAA.short",
		"st1." + strings.Repeat("A", MaxLen)} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%.20q) accepted", s)
		}
	}
}

// FuzzParse feeds Parse arbitrary strings: it never panics, and what it
// accepts re-signs to a token that parses to the same identifier.
func FuzzParse(f *testing.F) {
	secret := bytes.Repeat([]byte{1}, SecretLen)
	s, _ := Sign(sample(), secret)
	f.Add(s)
	f.Add("st1..")
	f.Add("st1.CAE.AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := Parse(s)
		if err != nil {
			return
		}
		if tok.ID.GetUser() == "" || len(tok.Password) != 32 {
			t.Fatalf("accepted %q with no user or a short signature", s)
		}
		again, err := Sign(tok.ID, secret)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(again)
		if err != nil || !proto.Equal(back.ID, tok.ID) || !back.Verify(secret) {
			t.Fatalf("re-signed %v: %v", tok.ID, err)
		}
	})
}
