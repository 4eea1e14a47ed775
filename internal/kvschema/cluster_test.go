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

func TestRequestAgeOrder(t *testing.T) {
	id := []byte("0123456789abcdef")
	start, end := RequestAgeRange(100)
	for _, at := range []int64{0, 99} {
		k := RequestAgeKey(at, id)
		if bytes.Compare(k, start) < 0 || bytes.Compare(k, end) >= 0 {
			t.Errorf("age %d outside the range before 100", at)
		}
	}
	if k := RequestAgeKey(100, id); bytes.Compare(k, end) < 0 {
		t.Error("age 100 inside the range before 100")
	}
	if got, err := DecodeRequestAgeKey(RequestAgeKey(5, id)); err != nil || !bytes.Equal(got, id) {
		t.Fatalf("id %q %v", got, err)
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
