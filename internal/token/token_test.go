package token

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

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

// TestParseRefusesNonCanonical changes a token's text where the lenient
// base64 would read the same bytes: the last character of each part, to
// one that differs only in the bits past the data, and a line break
// inside. Each is refused.
func TestParseRefusesNonCanonical(t *testing.T) {
	s, _ := Sign(sample(), bytes.Repeat([]byte{1}, SecretLen))
	parts := strings.Split(s, ".")
	var changed []string
	for i := 1; i <= 2; i++ {
		p := parts[i]
		last := strings.IndexByte(alphabet, p[len(p)-1])
		// The last character of a part of 3n+1 or 3n+2 bytes carries 4 or
		// 2 bits past the data; flipping the lowest keeps the bytes.
		other := append([]string(nil), parts...)
		other[i] = p[:len(p)-1] + string(alphabet[last^1])
		lenient, err := base64.RawURLEncoding.DecodeString(other[i])
		want, _ := base64.RawURLEncoding.DecodeString(p)
		if err != nil || !bytes.Equal(lenient, want) {
			t.Fatalf("part %d: %q does not decode leniently to the same bytes as %q: the test proves nothing", i, other[i], p)
		}
		changed = append(changed, strings.Join(other, "."))
		broken := append([]string(nil), parts...)
		broken[i] = p[:4] + "\n" + p[4:]
		changed = append(changed, strings.Join(broken, "."))
	}
	for _, c := range changed {
		if tok, err := Parse(c); err == nil {
			t.Errorf("Parse(%q) accepted the token %q spelled otherwise (as %q)", c, s, tok)
		}
	}
	if _, err := Parse(s); err != nil {
		t.Fatalf("the token itself: %v", err)
	}
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// FuzzParse feeds Parse arbitrary strings: it never panics; what it
// accepts is the one text of its token (String gives it back, so no other
// spelling of the same bytes is accepted), and re-signs to a token that
// parses to the same identifier.
func FuzzParse(f *testing.F) {
	secret := bytes.Repeat([]byte{1}, SecretLen)
	s, _ := Sign(sample(), secret)
	f.Add(s)
	f.Add(s[:len(s)-1] + "B")
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
		if got := tok.String(); got != strings.TrimSpace(s) {
			t.Fatalf("accepted %q, whose token is %q: two texts for one token", s, got)
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

// FuzzSignParse signs identifiers of any content: each parses back to the
// same identifier, bytes and signature, and its text is what String makes
// of them.
func FuzzSignParse(f *testing.F) {
	f.Add(uint32(1), uint64(7), "strata", "alice", "g1", int64(1000), int64(2000), int64(3000), true, []byte("k"))
	f.Add(uint32(0), uint64(1), "", "root", "", int64(-1), int64(0), int64(1<<62), false, []byte{})
	f.Fuzz(func(t *testing.T, keyID uint32, id uint64, cluster, user, group string, issued, expires, maxDate int64,
		renewable bool, secret []byte) {
		in := &pb.TokenIdentifier{KeyId: keyID, Id: id, Cluster: cluster, User: user, Issued: issued,
			Expires: expires, MaxDate: maxDate, Renewable: renewable}
		if group != "" {
			in.Groups = []string{group, group + "2"}
		}
		s, err := Sign(in, secret)
		if err != nil {
			return // strings that are not UTF-8: protobuf refuses them
		}
		tok, err := Parse(s)
		if user == "" || id == 0 || len(s) > MaxLen {
			if err == nil {
				t.Fatalf("accepted %v, which names no user or id, or is too long", in)
			}
			return
		}
		if err != nil {
			t.Fatalf("Parse(Sign(%v)): %v", in, err)
		}
		if !proto.Equal(tok.ID, in) || tok.String() != s || (len(secret) > 0 && !tok.Verify(secret)) {
			t.Fatalf("Parse(Sign(%v)) = %v, text %q, want %q", in, tok.ID, tok.String(), s)
		}
	})
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"alice", "hdfs", "svc-etl_2", "user.name", "ALICE@EXAMPLE.COM", "user/host", "élodie",
		strings.Repeat("a", MaxNameLen)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "root\n", "ali ce", " alice", "alice\t", "a\x00b", "a\u202eb", "a\u200bb",
		"a:b", "a,b", "\xff", strings.Repeat("a", MaxNameLen+1), "a\u00a0b"} {
		if err := CheckName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", bad, err)
		}
	}
}

func TestLifetimes(t *testing.T) {
	h := time.Hour
	for _, c := range []struct {
		ttl, maxLife, wantTTL, wantMax time.Duration
		bad                            bool
	}{
		{0, 0, DefaultTTL, DefaultMaxLifetime, false},
		{2 * h, 0, 2 * h, DefaultMaxLifetime, false},
		{0, h, h, h, false}, // the default ttl, cut to the max lifetime
		{h, h, h, h, false},
		{168 * h, 0, 168 * h, DefaultMaxLifetime, false},
		{2000000 * h, 0, 0, 0, true}, // the issue's: a max date past --max-lifetime
		{2 * h, h, 0, 0, true},
		{-h, 0, 0, 0, true},
		{0, -h, 0, 0, true},
	} {
		ttl, maxLife, err := Lifetimes(c.ttl, c.maxLife)
		if c.bad {
			if !errors.Is(err, ErrLifetime) {
				t.Errorf("Lifetimes(%v, %v) = %v, %v, %v: want ErrLifetime", c.ttl, c.maxLife, ttl, maxLife, err)
			}
			continue
		}
		if err != nil || ttl != c.wantTTL || maxLife != c.wantMax {
			t.Errorf("Lifetimes(%v, %v) = %v, %v, %v: want %v, %v", c.ttl, c.maxLife, ttl, maxLife, err, c.wantTTL, c.wantMax)
		}
	}
}
