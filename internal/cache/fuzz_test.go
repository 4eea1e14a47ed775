package cache

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzDecodeSidecar feeds the sidecar decoder arbitrary bytes (a sidecar is
// read from a disk that may hold anything after a crash): it must not
// panic, and what it accepts must keep the block's shape and re-encode to
// the same log.
func FuzzDecodeSidecar(f *testing.F) {
	const key = "0000000000000001-0000000000000002"
	valid := appendHeader(nil, key, testPS, testPS, 12345)
	valid = appendRecord(valid, record{kind: recPresent, idx: 0, n: testPS, crcs: []uint32{7}})
	valid = appendRecord(valid, record{kind: recPresent, idx: 3, n: 100, crcs: []uint32{8}})
	valid = appendRecord(valid, record{kind: recDropped, idx: 0})
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(append(bytes.Clone(valid), 0, 0, 0))
	f.Add([]byte(metaMagic))
	chunked := appendHeader(nil, key, 4*testPS, testPS, 12345)
	chunked = appendRecord(chunked, record{kind: recPresent, idx: 1, n: 4 * testPS, crcs: []uint32{1, 2, 3, 4}})
	chunked = appendRecord(chunked, record{kind: recPresent, idx: 2, n: testPS + 1, crcs: []uint32{5, 6}})
	f.Add(chunked)
	f.Add(chunked[:len(chunked)-5])
	f.Add(appendV1Record(appendV1Header(nil, key, testPS, 12345), 0, testPS, 7))
	f.Fuzz(func(t *testing.T, buf []byte) {
		s, err := decodeSidecar(buf)
		if err != nil {
			return
		}
		if s.validLen > int64(len(buf)) || s.torn != (s.validLen < int64(len(buf))) {
			t.Fatalf("valid length %d of %d, torn %v", s.validLen, len(buf), s.torn)
		}
		if err := s.checkShape(); err != nil {
			t.Fatal(err)
		}
		for i, pg := range s.pages {
			if pg.state == present && int64(len(pg.crcs)) != (int64(pg.n)+s.chunk-1)/s.chunk {
				t.Fatalf("page %d of %d bytes has %d CRCs of %d-byte chunks", i, pg.n, len(pg.crcs), s.chunk)
			}
		}
		again := appendHeader(nil, s.key, s.pageSize, s.chunk, s.created)
		for i, pg := range s.pages {
			if pg.state == present {
				again = appendRecord(again, record{kind: recPresent, idx: uint32(i), n: pg.n, crcs: pg.crcs})
			}
		}
		s2, err := decodeSidecar(again)
		if err != nil || s2.key != s.key || s2.chunk != s.chunk || len(s2.pages) > len(s.pages) {
			t.Fatalf("re-encoded sidecar: %v", err)
		}
		for i, pg := range s2.pages {
			if was := s.pages[i]; pg.n != was.n || pg.state != was.state || !slices.Equal(pg.crcs, was.crcs) {
				t.Fatalf("page %d: %+v re-decoded as %+v", i, was, pg)
			}
		}
	})
}

// FuzzParseName checks that names found on disk parse only if they are
// names the cache writes, and that keys are safe path components.
func FuzzParseName(f *testing.F) {
	f.Add("0000000000000001-0000000000000002.00000000000000ff.data")
	f.Add("k.0000000000000000.meta.tmp")
	f.Add("../x.0000000000000000.data")
	f.Fuzz(func(t *testing.T, name string) {
		key, gen, ext, ok := parseName(name)
		if !ok {
			return
		}
		if validateKey(key) != nil || bytes.ContainsAny([]byte(key), "./\x00") {
			t.Fatalf("unsafe key %q accepted", key)
		}
		b := blockBase("", key, gen)
		if want := b[len(b)-len(key)-17:] + "." + ext; want != name {
			t.Fatalf("%q parsed as %q %x %q", name, key, gen, ext)
		}
	})
}
