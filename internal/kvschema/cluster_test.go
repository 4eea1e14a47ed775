package kvschema

import (
	"bytes"
	"reflect"
	"testing"
)

func TestAnswerRoundTrip(t *testing.T) {
	for _, a := range []Answer{
		{At: 1_700_000_000_000, Kind: AnswerNone},
		{At: 5, Kind: AnswerBool, Bool: true},
		{At: 6, Kind: AnswerText, Text: "/a/b"},
		{At: 7, Kind: AnswerInode, Inode: &Inode{ID: 9, Type: TypeFile, Name: "f", Holder: "c"}},
	} {
		got, err := DecodeAnswer(EncodeAnswer(a))
		if err != nil || !reflect.DeepEqual(got, a) {
			t.Errorf("%+v came back as %+v (%v)", a, got, err)
		}
		enc := EncodeAnswer(a)
		for i := range enc {
			if _, err := DecodeAnswer(enc[:i]); err == nil {
				t.Errorf("%+v truncated at %d: decoded", a, i)
			}
		}
	}
}

func TestMemberRoundTrip(t *testing.T) {
	m := Member{ID: 3, Address: "10.0.0.3:7700", Learner: true}
	got, err := DecodeMember(MemberKey(3), EncodeMember(m))
	if err != nil || got != m {
		t.Fatalf("%+v came back as %+v (%v)", m, got, err)
	}
	if _, err := DecodeMember(MemberKey(3)[:5], EncodeMember(m)); err == nil {
		t.Fatal("short key decoded")
	}
}

// The answers of a minute sort before those of the next whatever their
// ids, and the range before a time holds the minutes before its own.
func TestRequestKeysInMinuteOrder(t *testing.T) {
	low, high := []byte{0x00}, bytes.Repeat([]byte{0xff}, MaxRequestID)
	start, end := RequestRange(5*RequestMinute + 30_000)
	for _, at := range []int64{0, 4*RequestMinute + 59_999} {
		for _, id := range [][]byte{low, high} {
			if k := RequestKey(at, id); bytes.Compare(k, start) < 0 || bytes.Compare(k, end) >= 0 {
				t.Errorf("answer at %d ms (id %x) outside the range before minute 5", at, id[:1])
			}
		}
	}
	for _, at := range []int64{5 * RequestMinute, 5*RequestMinute + 30_000} {
		if k := RequestKey(at, low); bytes.Compare(k, end) < 0 {
			t.Errorf("answer at %d ms inside the range before minute 5", at)
		}
	}
	if bytes.Compare(RequestKey(RequestMinute-1, high), RequestKey(RequestMinute, low)) >= 0 {
		t.Error("a minute's answers do not sort before the next minute's")
	}
}

func FuzzDecodeAnswer(f *testing.F) {
	f.Add(EncodeAnswer(Answer{At: 1, Kind: AnswerText, Text: "x"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAnswer(b)
		if err != nil {
			return
		}
		if again, err := DecodeAnswer(EncodeAnswer(a)); err != nil || !reflect.DeepEqual(a, again) {
			t.Fatalf("re-encode changed the answer: %+v vs %+v (%v)", a, again, err)
		}
	})
}
