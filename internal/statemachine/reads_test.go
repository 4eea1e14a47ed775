package statemachine

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kvschema"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// A listing's entries, encoded from their records, are what proto.Marshal
// makes of FileStatus: byte for byte.
func TestAppendFileStatusIsMarshal(t *testing.T) {
	inodes := []*kvschema.Inode{
		{ID: 1, Type: kvschema.TypeDir},
		{ID: 2, Name: "d", Type: kvschema.TypeDir, Perm: 0o1777, Owner: "alice", Group: "staff",
			Mtime: 1764000000000, Atime: -1, Children: 3, SubFiles: 9, SubDirs: 2, SubLength: 77},
		{ID: math.MaxUint64, Parent: 2, Name: "f", Type: kvschema.TypeFile, Perm: 0o644, Owner: "bob",
			Group: "g", Mtime: math.MinInt64, Atime: math.MaxInt64, Length: 1 << 40, Replication: 3,
			BlockSize: 64 << 20, Blocks: 2},
		{ID: 4, Name: "open, été", Type: kvschema.TypeFile, Holder: "client-1", Inline: true, Length: 512},
		{ID: 5, Name: "empty", Type: kvschema.TypeFile},
		{ID: 6, Name: "acl", Type: kvschema.TypeDir, InodeExt: kvschema.InodeExt{Policy: 1, XAttrs: true,
			ACL: []kvschema.ACLEntry{{Type: kvschema.ACLUser, Name: "u", Perm: 7}, {Type: kvschema.ACLGroup, Perm: 5}}}},
		{ID: 7, Name: "aclf", Type: kvschema.TypeFile, InodeExt: kvschema.InodeExt{
			ACL: []kvschema.ACLEntry{{Type: kvschema.ACLGroup, Name: "g", Perm: 1}}}},
	}
	for _, n := range inodes {
		var v kvschema.InodeView
		if err := kvschema.DecodeInodeView(kvschema.EncodeInode(n), &v); err != nil {
			t.Fatalf("%q: %v", n.Name, err)
		}
		got := appendFileStatus([]byte("prefix"), &v)
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(FileStatus(n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%q: appendFileStatus = %x, proto.Marshal = %x", n.Name, got[6:], want)
		}
	}
}

// WireForm gives a listing's entries back as a client receives them.
func TestListEntriesRideAsField1(t *testing.T) {
	n := &kvschema.Inode{ID: 9, Name: "x", Type: kvschema.TypeFile, Owner: "o", Replication: 1}
	var v kvschema.InodeView
	if err := kvschema.DecodeInodeView(kvschema.EncodeInode(n), &v); err != nil {
		t.Fatal(err)
	}
	resp := &pb.ListResponse{HasMore: true}
	wire := appendBytesField(nil, listEntriesField, appendFileStatus(nil, &v))
	resp.ProtoReflect().SetUnknown(append(wire, wire...))
	got, err := WireForm(resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetEntries()) != 2 || !proto.Equal(got.GetEntries()[1], FileStatus(n)) || !got.GetHasMore() {
		t.Fatalf("WireForm = %v", got)
	}
}
