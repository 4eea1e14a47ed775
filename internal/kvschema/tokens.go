package kvschema

import "encoding/binary"

// The service's token state (docs/security.md): a record of every token it
// issued, which renewals extend and revocations mark. (The keys it signs
// them with are cluster secrets, SecretKey.)
const prefixToken = 0x11

// NextTokenKey holds the id of the next token to issue.
var NextTokenKey = []byte{prefixSystem, 'n', 'e', 'x', 't', 't', 'o', 'k', 'e', 'n'}

// TokenRecordKey is the key of token id's record.
func TokenRecordKey(id uint64) []byte { return idKey(prefixToken, id) }

// TokenRecordRange is the range [start, end) of the token records.
func TokenRecordRange() (start, end []byte) { return []byte{prefixToken}, []byte{prefixToken + 1} }

// TokenRecord is what the service knows of a token it issued. Times are
// milliseconds since the epoch.
type TokenRecord struct {
	ID        uint64
	User      string
	Groups    []string
	Issued    int64
	Expires   int64 // as renewals left it
	MaxDate   int64
	Renewable bool
	Revoked   int64 // when it was revoked; 0 if it was not
}

// EncodeTokenRecord encodes a token record (the id is in the key).
func EncodeTokenRecord(t *TokenRecord) []byte {
	b := appendString([]byte{recordVersion}, t.User)
	b = binary.AppendUvarint(b, uint64(len(t.Groups)))
	for _, g := range t.Groups {
		b = appendString(b, g)
	}
	b = binary.AppendVarint(b, t.Issued)
	b = binary.AppendVarint(b, t.Expires)
	b = binary.AppendVarint(b, t.MaxDate)
	b = appendBool(b, t.Renewable)
	return binary.AppendVarint(b, t.Revoked)
}

// DecodeTokenRecord decodes the token record at key.
func DecodeTokenRecord(key, b []byte) (*TokenRecord, error) {
	if len(key) != 9 || key[0] != prefixToken {
		return nil, ErrCorrupt
	}
	d := decoder{b: b}
	if d.byte() != recordVersion {
		return nil, ErrCorrupt
	}
	t := &TokenRecord{ID: binary.BigEndian.Uint64(key[1:]), User: d.string()}
	n := d.uvarintMax(uint64(len(d.b)))
	for range n {
		t.Groups = append(t.Groups, d.string())
	}
	t.Issued, t.Expires, t.MaxDate = d.varint(), d.varint(), d.varint()
	t.Renewable, t.Revoked = d.bool(), d.varint()
	return t, d.finish()
}
