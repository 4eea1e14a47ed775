package kvschema

import (
	"bytes"
	"reflect"
	"testing"
)

// An inode without extensions is written as before they existed; one with
// them round-trips, and no prefix of it decodes.
func TestInodeExtensions(t *testing.T) {
	plain := &Inode{ID: 3, Type: TypeDir, Name: "d", Owner: "o", Group: "g", SubFiles: 2}
	if b := EncodeInode(plain); b[0] != recordVersion {
		t.Fatalf("an inode without extensions has version %d", b[0])
	}
	in := *plain
	in.InodeExt = InodeExt{Policy: 3, Quota: &Quota{Names: 10, Space: NoQuota}, XAttrs: true,
		ACL: []ACLEntry{{Type: ACLUser, Name: "bruce", Perm: 7}, {Type: ACLGroup, Perm: 5},
			{Default: true, Type: ACLUser, Perm: 7}, {Default: true, Type: ACLMask, Perm: 4}}}
	b := EncodeInode(&in)
	if b[0] != inodeExtVersion {
		t.Fatalf("version %d", b[0])
	}
	out, err := DecodeInode(b)
	if err != nil || !reflect.DeepEqual(out, &in) {
		t.Fatalf("round trip: %+v %v", out, err)
	}
	var v InodeView
	if err := DecodeInodeView(b, &v); err != nil || !reflect.DeepEqual(v.InodeExt, in.InodeExt) {
		t.Fatalf("view: %+v %v", v.InodeExt, err)
	}
	for i := range b {
		if _, err := DecodeInode(b[:i]); err == nil {
			t.Errorf("cut at %d: decoded", i)
		}
	}
	// Non-canonical forms: no extension at all, an unknown flag, policy 0,
	// an empty ACL, a quota that limits nothing.
	base := EncodeInode(plain)
	base[0] = inodeExtVersion
	for _, tail := range [][]byte{{0}, {0x10}, {extPolicy, 0}, {extACL, 0}, {extQuota, 1, 1}} {
		if _, err := DecodeInode(append(bytes.Clone(base), tail...)); err == nil {
			t.Errorf("extensions %x decoded", tail)
		}
	}
}

func TestACLEntryOrder(t *testing.T) {
	in := []ACLEntry{{Default: true, Type: ACLUser}, {Type: ACLOther}, {Type: ACLMask}, {Type: ACLGroup, Name: "g"},
		{Type: ACLGroup}, {Type: ACLUser, Name: "b"}, {Type: ACLUser, Name: "a"}, {Type: ACLUser}}
	want := []ACLEntry{{Type: ACLUser}, {Type: ACLUser, Name: "a"}, {Type: ACLUser, Name: "b"}, {Type: ACLGroup},
		{Type: ACLGroup, Name: "g"}, {Type: ACLMask}, {Type: ACLOther}, {Default: true, Type: ACLUser}}
	for i := range in {
		for j := i + 1; j < len(in); j++ {
			if in[j].Compare(in[i]) < 0 {
				in[i], in[j] = in[j], in[i]
			}
		}
	}
	if !reflect.DeepEqual(in, want) {
		t.Fatalf("order:\n got %v\nwant %v", in, want)
	}
}

func TestXAttrKeys(t *testing.T) {
	k := XAttrKey(7, "user.a")
	if name, err := XAttrName(k); err != nil || name != "user.a" {
		t.Fatalf("name %q %v", name, err)
	}
	start, end := XAttrRange(7)
	if bytes.Compare(start, k) > 0 || bytes.Compare(k, end) >= 0 || bytes.Compare(XAttrKey(8, ""), end) < 0 {
		t.Fatal("range")
	}
	if _, err := XAttrName(InodeKey(7)); err == nil {
		t.Fatal("an inode key decoded as an xattr key")
	}
}
