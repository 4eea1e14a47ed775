package blocktoken

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

var ring = Keyring{Secret: []byte("0123456789abcdef0123456789abcdef"), Period: time.Hour}

func keysAt(now int64) func(uint32) (Key, bool) {
	return func(id uint32) (Key, bool) {
		for _, k := range ring.Around(now) {
			if k.ID == id {
				return k, true
			}
		}
		return Key{}, false
	}
}

func TestIssueVerify(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).UnixMilli()
	b, exp := ring.Issue(now, 10*time.Minute, Write, "lake", 42, "a/b")
	got, err := Verify(b, now, keysAt(now))
	if err != nil {
		t.Fatal(err)
	}
	want := Token{KeyID: ring.Current(now).ID, Expires: exp, Mode: Write, Namespace: "lake", Inode: 42, Object: "a/b"}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if err := got.Allows(Write, "lake", 42, "a/b"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode   Mode
		ns     string
		inode  uint64
		object string
	}{{Read, "lake", 42, "a/b"}, {Write, "other", 42, "a/b"}, {Write, "lake", 43, "a/b"}, {Write, "lake", 42, "a/c"}} {
		if got.Allows(c.mode, c.ns, c.inode, c.object) == nil {
			t.Errorf("a token for lake/42 write allows %v", c)
		}
	}
}

func TestVerifyRefuses(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 30, 0, 0, time.UTC).UnixMilli()
	good, exp := ring.Issue(now, 10*time.Minute, Read, "default", 7, "")
	flipped := bytes.Clone(good)
	flipped[20] ^= 1 // the inode
	other := Keyring{Secret: []byte("another cluster's secret........."), Period: time.Hour}
	foreign, _ := other.Issue(now, 10*time.Minute, Read, "default", 7, "")
	for name, c := range map[string]struct {
		b    []byte
		at   int64
		want error
	}{
		"missing":        {nil, now, ErrMissing},
		"truncated":      {good[:len(good)-1], now, ErrMalformed},
		"forged":         {flipped, now, ErrForged},
		"other cluster":  {foreign, now, ErrForged},
		"expired":        {good, exp + 1, ErrExpired},
		"old key gone":   {good, now + 3*time.Hour.Milliseconds(), ErrUnknownKey},
		"garbage":        {[]byte("not a token at all, but long enough to look like one........"), now, ErrMalformed},
		"previous valid": {good, exp, nil},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Verify(c.b, c.at, keysAt(c.at)); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

// A token signed at the very end of a period is still accepted in the next
// one, with the previous key, until it expires.
func TestRotationGrace(t *testing.T) {
	p := time.Hour.Milliseconds()
	now := 1000*p - 1
	b, exp := ring.Issue(now, time.Hour, Read, "default", 1, "")
	if exp <= now+p-1 {
		t.Fatalf("expiry %d", exp)
	}
	if _, err := Verify(b, exp, keysAt(exp)); err != nil {
		t.Fatalf("a token signed with the previous key: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := ring.Issue(1e12, time.Minute, Read, "lake", 9, "obj")
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, body, sig, err := Decode(b)
		if err != nil {
			return
		}
		if len(sig) != macLen || len(body)+len(sig) != len(b) {
			t.Fatalf("split %d+%d of %d", len(body), len(sig), len(b))
		}
		// What decodes re-encodes to the same bytes (with its key's MAC).
		k := ring.Key(tok.KeyID)
		again := Sign(tok, k)
		if !bytes.Equal(again[:len(again)-macLen], body) {
			t.Fatalf("re-encoding %+v differs", tok)
		}
		if _, err := Verify(b, tok.Expires, func(id uint32) (Key, bool) { return k, id == k.ID }); err == nil && !bytes.Equal(again, b) {
			t.Fatal("a token verified whose MAC is not the key's")
		}
	})
}

// A token of a file with a storage policy carries it, signed; one of the
// default policy is a version 1 token, as before policies existed.
func TestPolicy(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).UnixMilli()
	b, _ := ring.IssueToken(now, time.Minute, Token{Mode: Write, Namespace: "lake", Inode: 42, Policy: 3})
	got, err := Verify(b, now, keysAt(now))
	if err != nil || got.Policy != 3 || b[0] != policyVersion {
		t.Fatalf("got %+v %v (version %d)", got, err, b[0])
	}
	if plain, _ := ring.Issue(now, time.Minute, Write, "lake", 42, ""); plain[0] != version {
		t.Fatalf("a token of the default policy has version %d", plain[0])
	}
	forged := bytes.Clone(b)
	forged[len(forged)-macLen-1] = 1 // another policy, same signature
	if _, err := Verify(forged, now, keysAt(now)); !errors.Is(err, ErrForged) {
		t.Fatalf("a token whose policy was changed: %v", err)
	}
	zero := Sign(Token{Mode: Read, Namespace: "n", Inode: 1, Expires: now + 1}, ring.Current(now))
	zero = append(append(bytes.Clone(zero[:len(zero)-macLen]), 0), zero[len(zero)-macLen:]...)
	zero[0] = policyVersion
	if _, _, _, err := Decode(zero); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a version 2 token of policy 0: %v", err)
	}
}
