package kvschema

import (
	"encoding/binary"
	"strings"
)

const recordVersion = 1

// Type is the kind of an inode.
type Type uint8

// Inode types.
const (
	TypeFile Type = 1
	TypeDir  Type = 2
)

// Inode is the attribute record of a file or directory.
type Inode struct {
	ID     uint64
	Parent uint64 // 0 for a namespace root or a detached subtree
	Name   string
	Type   Type
	Perm   uint16 // 0o7777 mode bits
	Owner  string
	Group  string
	Mtime  int64 // milliseconds since the epoch
	Atime  int64
	Length uint64 // committed length of a file
	// Files only.
	Replication uint32
	BlockSize   uint64
	Holder      string // lease holder; non-empty while open for writing
	Inline      bool   // content lives under InlineKey, not in blocks
	Blocks      uint32 // number of block records
	// Directories only: direct entries and the aggregates of the subtree
	// below (not counting the directory itself).
	Children  uint64
	SubFiles  uint64
	SubDirs   uint64
	SubLength uint64
	// Extensions (inodeext.go), which few inodes have: an inode with none
	// encodes as it did before they existed.
	InodeExt
}

// IsDir reports whether the inode is a directory.
func (n *Inode) IsDir() bool { return n.Type == TypeDir }

// EncodeInode encodes an inode record.
func EncodeInode(n *Inode) []byte {
	return AppendInode(make([]byte, 0, 64+len(n.Name)+len(n.Owner)+len(n.Group)+len(n.Holder)), n)
}

// AppendInode appends an inode record to b.
func AppendInode(b []byte, n *Inode) []byte {
	b = append(b, recordVersion, byte(n.Type))
	b = binary.AppendUvarint(b, n.ID)
	b = binary.AppendUvarint(b, n.Parent)
	b = appendString(b, n.Name)
	b = binary.AppendUvarint(b, uint64(n.Perm))
	b = appendString(b, n.Owner)
	b = appendString(b, n.Group)
	b = binary.AppendVarint(b, n.Mtime)
	b = binary.AppendVarint(b, n.Atime)
	b = binary.AppendUvarint(b, n.Length)
	b = binary.AppendUvarint(b, uint64(n.Replication))
	b = binary.AppendUvarint(b, n.BlockSize)
	b = appendString(b, n.Holder)
	b = appendBool(b, n.Inline)
	b = binary.AppendUvarint(b, uint64(n.Blocks))
	b = binary.AppendUvarint(b, n.Children)
	b = binary.AppendUvarint(b, n.SubFiles)
	b = binary.AppendUvarint(b, n.SubDirs)
	b = binary.AppendUvarint(b, n.SubLength)
	if n.InodeExt.empty() {
		return b
	}
	b[0] = inodeExtVersion
	return n.InodeExt.append(b)
}

// DecodeInode decodes an inode record.
func DecodeInode(b []byte) (*Inode, error) {
	var v InodeView
	if err := DecodeInodeView(b, &v); err != nil {
		return nil, err
	}
	n := new(Inode)
	*n = v.Inode
	// The four strings share one allocation: the apply of a create
	// decodes about ten inodes.
	var sb strings.Builder
	sb.Grow(len(v.Name) + len(v.Owner) + len(v.Group) + len(v.Holder))
	for _, f := range [...][]byte{v.Name, v.Owner, v.Group, v.Holder} {
		sb.Write(f)
	}
	all := sb.String()
	n.Name, all = all[:len(v.Name)], all[len(v.Name):]
	n.Owner, all = all[:len(v.Owner)], all[len(v.Owner):]
	n.Group, n.Holder = all[:len(v.Group)], all[len(v.Group):]
	return n, nil
}

// InodeView is an inode record decoded without copying: its strings alias
// the record's bytes, so it is good only as long as they are. A listing
// encodes each entry for the wire straight from one, reused, without
// allocating.
type InodeView struct {
	Inode                      // the record's fields, its strings left empty
	Name, Owner, Group, Holder []byte
}

// DecodeInodeView decodes an inode record into v.
func DecodeInodeView(b []byte, v *InodeView) error {
	d := decoder{b: b}
	version := d.byte()
	if version != recordVersion && version != inodeExtVersion {
		return ErrCorrupt
	}
	n := &v.Inode
	*n = Inode{Type: Type(d.byte())}
	n.ID = d.uvarint()
	n.Parent = d.uvarint()
	v.Name = d.bytes()
	n.Perm = uint16(d.uvarintMax(0o7777))
	v.Owner = d.bytes()
	v.Group = d.bytes()
	n.Mtime = d.varint()
	n.Atime = d.varint()
	n.Length = d.uvarint()
	n.Replication = uint32(d.uvarintMax(1<<32 - 1))
	n.BlockSize = d.uvarint()
	v.Holder = d.bytes()
	n.Inline = d.bool()
	n.Blocks = uint32(d.uvarintMax(1<<32 - 1))
	n.Children = d.uvarint()
	n.SubFiles = d.uvarint()
	n.SubDirs = d.uvarint()
	n.SubLength = d.uvarint()
	if version == inodeExtVersion {
		n.InodeExt = decodeInodeExt(&d)
	}
	if err := d.finish(); err != nil {
		return err
	}
	if n.Type != TypeFile && n.Type != TypeDir {
		return ErrCorrupt
	}
	return nil
}

// Dentry is the value of a directory entry.
type Dentry struct {
	Child uint64
	Type  Type
}

// EncodeDentry encodes a directory entry value.
func EncodeDentry(d Dentry) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 9), d.Child)
	return append(b, byte(d.Type))
}

// DecodeDentry decodes a directory entry value.
func DecodeDentry(b []byte) (Dentry, error) {
	if len(b) != 9 || (Type(b[8]) != TypeFile && Type(b[8]) != TypeDir) {
		return Dentry{}, ErrCorrupt
	}
	return Dentry{Child: binary.BigEndian.Uint64(b), Type: Type(b[8])}, nil
}

// Namespace modes (the wire enum's values).
const (
	ModeBlock uint8 = 1
	ModeCache uint8 = 2
)

// Namespace is the record of one namespace of the service.
type Namespace struct {
	Name     string
	Mode     uint8 // ModeBlock or ModeCache
	StoreURI string
	Root     uint64
	Created  int64
	// SyncInterval is a cache-mode namespace's sync policy, in seconds:
	// -1 trusts what was loaded from the bucket for ever, 0 checks the
	// bucket on every access, N trusts it for N seconds.
	SyncInterval int64
	// Deleted is when the namespace was moved to the trash (0: it is not
	// in the trash), PurgeAt when it is to be removed for good.
	Deleted, PurgeAt int64
}

// IsCache reports whether the namespace is a cache-mode view of its bucket.
func (ns *Namespace) IsCache() bool { return ns.Mode == ModeCache }

// InTrash reports whether the namespace was deleted and awaits its purge.
func (ns *Namespace) InTrash() bool { return ns.Deleted != 0 }

// namespaceVersion 2 added the sync interval and the trash times; version
// 1 records read with them 0.
const namespaceVersion = 2

// EncodeNamespace encodes a namespace record.
func EncodeNamespace(ns *Namespace) []byte {
	b := []byte{namespaceVersion, ns.Mode}
	b = appendString(b, ns.Name)
	b = appendString(b, ns.StoreURI)
	b = binary.AppendUvarint(b, ns.Root)
	b = binary.AppendVarint(b, ns.Created)
	b = binary.AppendVarint(b, ns.SyncInterval)
	b = binary.AppendVarint(b, ns.Deleted)
	return binary.AppendVarint(b, ns.PurgeAt)
}

// DecodeNamespace decodes a namespace record.
func DecodeNamespace(b []byte) (*Namespace, error) {
	d := decoder{b: b}
	v := d.byte()
	if v != recordVersion && v != namespaceVersion {
		return nil, ErrCorrupt
	}
	ns := &Namespace{Mode: d.byte()}
	ns.Name = d.string()
	ns.StoreURI = d.string()
	ns.Root = d.uvarint()
	ns.Created = d.varint()
	if v >= 2 {
		ns.SyncInterval, ns.Deleted, ns.PurgeAt = d.varint(), d.varint(), d.varint()
	}
	return ns, d.finish()
}

// ObjectState is what a cache-mode namespace knows of the bucket behind one
// of its entries (key 0x0C inode). Times are the leader's, in milliseconds
// since the epoch, stamped on the command that recorded them.
type ObjectState struct {
	// ETag is the version of a file's object, as the bucket reported it;
	// empty for a directory.
	ETag string
	// Synced is when the bucket last confirmed the entry; 0 never (an
	// entry made by Strata and not yet seen in the bucket).
	Synced int64
	// Listed is, for a directory, when its children were last listed
	// whole from the bucket; 0 never.
	Listed int64
	// Stale is when an admin last asked for the entry, and everything
	// below it, to be checked against the bucket again: what the bucket
	// confirmed before then is not trusted.
	Stale int64
}

// EncodeObjectState encodes an object state record.
func EncodeObjectState(o ObjectState) []byte {
	b := appendString([]byte{recordVersion}, o.ETag)
	b = binary.AppendVarint(b, o.Synced)
	b = binary.AppendVarint(b, o.Listed)
	return binary.AppendVarint(b, o.Stale)
}

// DecodeObjectState decodes an object state record.
func DecodeObjectState(b []byte) (ObjectState, error) {
	d := decoder{b: b}
	if d.byte() != recordVersion {
		return ObjectState{}, ErrCorrupt
	}
	o := ObjectState{ETag: d.string(), Synced: d.varint(), Listed: d.varint(), Stale: d.varint()}
	return o, d.finish()
}

// Block is one immutable object holding a range of a file.
type Block struct {
	ID     uint64
	Offset uint64
	Length uint64
	// ObjectInode is the inode whose prefix the block's object is under,
	// when not the file's own (0): a block a concat moved from a source
	// file, whose object keeps its name (blocks.ObjectKey).
	ObjectInode uint64
}

// Owner is the inode the block's object is named by: ObjectInode, or the
// file's own, file.
func (bl Block) Owner(file uint64) uint64 {
	if bl.ObjectInode != 0 {
		return bl.ObjectInode
	}
	return file
}

// blockVersionMoved is the version of a block record with an object
// inode; records without one keep version 1, which every reader knows.
const blockVersionMoved = 2

// EncodeBlock encodes a block record: version 1 (id, offset, length), or
// version 2 with the object inode after them when it is set.
func EncodeBlock(bl Block) []byte {
	v := byte(recordVersion)
	if bl.ObjectInode != 0 {
		v = blockVersionMoved
	}
	b := []byte{v}
	b = binary.AppendUvarint(b, bl.ID)
	b = binary.AppendUvarint(b, bl.Offset)
	b = binary.AppendUvarint(b, bl.Length)
	if bl.ObjectInode != 0 {
		b = binary.AppendUvarint(b, bl.ObjectInode)
	}
	return b
}

// DecodeBlock decodes a block record of either version.
func DecodeBlock(b []byte) (Block, error) {
	d := decoder{b: b}
	v := d.byte()
	if v != recordVersion && v != blockVersionMoved {
		return Block{}, ErrCorrupt
	}
	bl := Block{ID: d.uvarint(), Offset: d.uvarint(), Length: d.uvarint()}
	if v == blockVersionMoved {
		if bl.ObjectInode = d.uvarint(); bl.ObjectInode == 0 {
			return Block{}, ErrCorrupt
		}
	}
	return bl, d.finish()
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// decoder reads fields in order; the first failure sticks and the later
// reads return zero values, so callers check once, in finish.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarintMax(max uint64) uint64 {
	v := d.uvarint()
	if v > max {
		d.bad = true
		return 0
	}
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

// bytes reads a string field without copying it.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.bad = true
	return false
}

func (d *decoder) finish() error {
	if d.bad || len(d.b) != 0 {
		return ErrCorrupt
	}
	return nil
}

// Garbage is an entry of the block garbage queue: what to delete, and from
// which bucket. A zero Block.ID asks for a scan of the file's objects.
type Garbage struct {
	StoreURI string
	Block    Block
}

// EncodeGarbage encodes a garbage record.
func EncodeGarbage(g Garbage) []byte {
	b := appendString([]byte{recordVersion}, g.StoreURI)
	b = binary.AppendUvarint(b, g.Block.ID)
	b = binary.AppendUvarint(b, g.Block.Offset)
	return binary.AppendUvarint(b, g.Block.Length)
}

// DecodeGarbage decodes a garbage record.
func DecodeGarbage(b []byte) (Garbage, error) {
	d := decoder{b: b}
	if d.byte() != recordVersion {
		return Garbage{}, ErrCorrupt
	}
	g := Garbage{StoreURI: d.string()}
	g.Block = Block{ID: d.uvarint(), Offset: d.uvarint(), Length: d.uvarint()}
	return g, d.finish()
}
