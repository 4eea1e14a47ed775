package kvschema

import (
	"bytes"
	"reflect"
	"testing"
)

func TestInodeRoundTrip(t *testing.T) {
	in := &Inode{ID: 1 << 40, Parent: 7, Name: "part-00000.parquet", Type: TypeFile, Perm: 0o1755,
		Owner: "alice", Group: "hadoop", Mtime: 1_700_000_000_123, Atime: -5, Length: 1 << 33,
		Replication: 3, BlockSize: 128 << 20, Holder: "client-1", Inline: true, Blocks: 9,
		Children: 1, SubFiles: 2, SubDirs: 3, SubLength: 4}
	out, err := DecodeInode(EncodeInode(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	good := EncodeInode(&Inode{ID: 3, Type: TypeDir, Name: "d", Owner: "o", Group: "g"})
	for i := range good {
		if _, err := DecodeInode(good[:i]); err == nil {
			t.Errorf("truncated at %d: decoded", i)
		}
	}
	if _, err := DecodeInode(append(bytes.Clone(good), 0)); err == nil {
		t.Error("trailing byte: decoded")
	}
	bad := bytes.Clone(good)
	bad[0] = 9
	if _, err := DecodeInode(bad); err == nil {
		t.Error("unknown version: decoded")
	}
}

func TestDentryKeysSortByParentThenName(t *testing.T) {
	keys := [][]byte{DentryKey(1, "b"), DentryKey(1, "a"), DentryKey(256, ""), DentryKey(2, "a")}
	want := [][]byte{DentryKey(1, "a"), DentryKey(1, "b"), DentryKey(2, "a"), DentryKey(256, "")}
	for i := 0; i < len(keys); i++ {
		for j := i + 1; j < len(keys); j++ {
			if bytes.Compare(keys[i], keys[j]) > 0 {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("order: %q", keys)
	}
	start, end := DentryRange(1)
	if bytes.Compare(start, DentryKey(1, "\xff\xff")) > 0 || bytes.Compare(DentryKey(1, "\xff\xff"), end) >= 0 {
		t.Fatal("range does not hold its entries")
	}
}

func TestOtherRecordsRoundTrip(t *testing.T) {
	ns := &Namespace{Name: "warehouse", Mode: ModeCache, StoreURI: "s3://b/p", Root: 2, Created: 99, SyncInterval: -1}
	if got, err := DecodeNamespace(EncodeNamespace(ns)); err != nil || !reflect.DeepEqual(got, ns) {
		t.Fatalf("namespace: %+v %v", got, err)
	}
	// A version 1 record, as written before sync intervals: read with 0.
	v1 := []byte{1, ModeBlock, 1, 'n', 3, 'u', 'r', 'i', 7, 0x0a}
	if got, err := DecodeNamespace(v1); err != nil || *got != (Namespace{Name: "n", Mode: ModeBlock, StoreURI: "uri", Root: 7, Created: 5}) {
		t.Fatalf("version 1 namespace: %+v %v", got, err)
	}
	ns.Deleted, ns.PurgeAt = 1000, 2000
	trashed := EncodeNamespace(ns)
	if got, err := DecodeNamespace(trashed); err != nil || !reflect.DeepEqual(got, ns) || !got.InTrash() {
		t.Fatalf("namespace in the trash: %+v %v", got, err)
	}
	for i := 1; i < len(trashed); i++ {
		if _, err := DecodeNamespace(trashed[:i]); err == nil {
			t.Errorf("a record cut at %d of %d decoded", i, len(trashed))
		}
	}
	o := ObjectState{ETag: `"abc"`, Synced: 1234, Listed: -1}
	if got, err := DecodeObjectState(EncodeObjectState(o)); err != nil || got != o {
		t.Fatalf("object state: %+v %v", got, err)
	}
	bl := Block{ID: 5, Offset: 1 << 27, Length: 100}
	if got, err := DecodeBlock(EncodeBlock(bl)); err != nil || got != bl {
		t.Fatalf("block: %+v %v", got, err)
	}
	de := Dentry{Child: 42, Type: TypeDir}
	if got, err := DecodeDentry(EncodeDentry(de)); err != nil || got != de {
		t.Fatalf("dentry: %+v %v", got, err)
	}
}

func FuzzDecodeInode(f *testing.F) {
	f.Add(EncodeInode(&Inode{ID: 1, Type: TypeFile, Name: "x"}))
	f.Add(EncodeInode(&Inode{ID: 2, Type: TypeDir, Name: "y", InodeExt: InodeExt{Policy: 1,
		Quota: &Quota{Names: 5, Space: -1}, ACL: []ACLEntry{{Type: ACLUser, Name: "u", Perm: 6}}, XAttrs: true}}))
	f.Add([]byte{1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := DecodeInode(b)
		if err != nil {
			return
		}
		if again, err := DecodeInode(EncodeInode(n)); err != nil || !reflect.DeepEqual(n, again) {
			t.Fatalf("re-encode changed the record: %+v vs %+v (%v)", n, again, err)
		}
	})
}

func FuzzDecodeOthers(f *testing.F) {
	f.Add(EncodeNamespace(&Namespace{Name: "n"}), EncodeBlock(Block{ID: 1}), EncodeDentry(Dentry{Child: 1, Type: TypeFile}))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		if ns, err := DecodeNamespace(a); err == nil {
			if _, err := DecodeNamespace(EncodeNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
		if bl, err := DecodeBlock(b); err == nil && bl != mustBlock(t, EncodeBlock(bl)) {
			t.Fatal("block changed")
		}
		if d, err := DecodeDentry(c); err == nil && !bytes.Equal(EncodeDentry(d), c) {
			t.Fatal("dentry changed")
		}
		if o, err := DecodeObjectState(c); err == nil {
			if again, err := DecodeObjectState(EncodeObjectState(o)); err != nil || again != o {
				t.Fatalf("object state changed: %+v %+v %v", o, again, err)
			}
		}
	})
}

func mustBlock(t *testing.T, b []byte) Block {
	bl, err := DecodeBlock(b)
	if err != nil {
		t.Fatal(err)
	}
	return bl
}

func TestTokenRecordRoundTrip(t *testing.T) {
	in := &TokenRecord{ID: 9, User: "alice", Groups: []string{"a", "b"}, Issued: 1, Expires: 2, MaxDate: 3,
		Renewable: true, Revoked: 4}
	out, err := DecodeTokenRecord(TokenRecordKey(9), EncodeTokenRecord(in))
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("%+v became %+v (%v)", in, out, err)
	}
	b := EncodeTokenRecord(in)
	for i := range len(b) {
		if _, err := DecodeTokenRecord(TokenRecordKey(9), b[:i]); err == nil {
			t.Fatalf("a record cut at %d of %d bytes decodes", i, len(b))
		}
	}
}
