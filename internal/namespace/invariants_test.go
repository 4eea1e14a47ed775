package namespace_test

import (
	"fmt"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// raw is the whole keyspace, decoded.
type raw struct {
	namespaces  map[string]*kvschema.Namespace
	inodes      map[uint64]*kvschema.Inode
	dentries    map[uint64]map[string]kvschema.Dentry // parent → name → entry
	inline      map[uint64][]byte
	blocks      map[uint64]map[uint32]kvschema.Block
	purge       map[uint64]bool
	garbage     map[uint64]kvschema.Block
	orphanScans map[uint64]string // inode -> bucket of a queued orphan scan
	leases      map[lease]bool
	xattrs      map[uint64]int // inode → attributes
	nextID      uint64
}

type lease struct {
	holder string
	ino    uint64
}

func readRaw(r kv.Reader) (*raw, error) {
	s := &raw{namespaces: map[string]*kvschema.Namespace{}, inodes: map[uint64]*kvschema.Inode{},
		dentries: map[uint64]map[string]kvschema.Dentry{}, inline: map[uint64][]byte{},
		blocks: map[uint64]map[uint32]kvschema.Block{}, purge: map[uint64]bool{},
		garbage: map[uint64]kvschema.Block{}, orphanScans: map[uint64]string{}, leases: map[lease]bool{},
		xattrs: map[uint64]int{}}
	var derr error
	err := r.Scan([]byte{}, nil, func(k, v []byte) bool {
		derr = s.add(k, v)
		if derr != nil {
			derr = fmt.Errorf("key %q: %w", k, derr)
		}
		return derr == nil
	})
	if err == nil {
		err = derr
	}
	return s, err
}

func (s *raw) add(k, v []byte) error {
	var err error
	switch k[0] {
	case 0x00:
		if string(k[1:]) == "nextid" {
			var vs []uint64
			vs, err = kvschema.DecodeUint64s(v, 1)
			if err == nil {
				s.nextID = vs[0]
			}
		}
	case 0x01:
		var ns *kvschema.Namespace
		if ns, err = kvschema.DecodeNamespace(v); err == nil {
			s.namespaces[kvschema.NamespaceName(k)] = ns
		}
	case 0x02:
		var name string
		var d kvschema.Dentry
		if name, err = kvschema.DentryName(k); err == nil {
			d, err = kvschema.DecodeDentry(v)
		}
		if err == nil {
			parent, _ := kvschema.KeyID(k)
			if s.dentries[parent] == nil {
				s.dentries[parent] = map[string]kvschema.Dentry{}
			}
			s.dentries[parent][name] = d
		}
	case 0x03:
		var n *kvschema.Inode
		if n, err = kvschema.DecodeInode(v); err == nil {
			if id, _ := kvschema.KeyID(k); id != n.ID || len(k) != 9 {
				return fmt.Errorf("inode %d under key of %d", n.ID, id)
			}
			s.inodes[n.ID] = n
		}
	case 0x04:
		id, _ := kvschema.KeyID(k)
		s.inline[id] = append([]byte(nil), v...)
	case 0x05:
		var b kvschema.Block
		if b, err = kvschema.DecodeBlock(v); err == nil && len(k) == 13 {
			id, _ := kvschema.KeyID(k)
			if s.blocks[id] == nil {
				s.blocks[id] = map[uint32]kvschema.Block{}
			}
			s.blocks[id][uint32(k[9])<<24|uint32(k[10])<<16|uint32(k[11])<<8|uint32(k[12])] = b
		}
	case 0x06:
		id, _ := kvschema.KeyID(k)
		s.purge[id] = true
	case 0x07:
		var g kvschema.Garbage
		var ino, block uint64
		if ino, block, err = kvschema.DecodeGarbageKey(k); err == nil {
			if g, err = kvschema.DecodeGarbage(v); err == nil && block != 0 {
				s.garbage[block] = g.Block
			} else if err == nil {
				s.orphanScans[ino] = g.StoreURI
			}
		}
	case 0x08:
		var l lease
		if l.holder, l.ino, err = kvschema.DecodeLeaseKey(k); err == nil {
			s.leases[l] = true
		}
	case 0x0E:
		if _, err = kvschema.XAttrName(k); err == nil {
			id, _ := kvschema.KeyID(k)
			s.xattrs[id]++
		}
	default:
		if !kvschema.IsRequestKey(k) { // the state machine's kept answers
			err = fmt.Errorf("unknown prefix")
		}
	}
	return err
}

// checkInvariants checks the raw keyspace: the dentries and inodes form
// trees rooted at namespace roots and detached subtrees, every live
// directory's counters equal a recount, and leases, inline content and
// block records belong to files that claim them.
func checkInvariants(r kv.Reader) error {
	s, err := readRaw(r)
	if err != nil {
		return err
	}
	for _, check := range []func() error{s.checkLinks, s.checkReachable, s.checkFiles, s.checkExtensions} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s *raw) checkLinks() error {
	for parent, entries := range s.dentries {
		p := s.inodes[parent]
		if p == nil || !p.IsDir() {
			return fmt.Errorf("dentries under %d, which is not a directory inode", parent)
		}
		for name, d := range entries {
			n := s.inodes[d.Child]
			if n == nil {
				return fmt.Errorf("dentry %d/%q points to missing inode %d", parent, name, d.Child)
			}
			if n.Parent != parent || n.Name != name || n.Type != d.Type {
				return fmt.Errorf("dentry %d/%q (type %d) points to inode %+v", parent, name, d.Type, n)
			}
		}
	}
	roots := map[uint64]bool{}
	for name, ns := range s.namespaces {
		n := s.inodes[ns.Root]
		if n == nil || !n.IsDir() || n.Parent != 0 {
			return fmt.Errorf("namespace %q: bad root %+v", name, n)
		}
		roots[ns.Root] = true
	}
	for id := range s.purge {
		n := s.inodes[id]
		if n == nil || !n.IsDir() || n.Parent != 0 || roots[id] {
			return fmt.Errorf("purge key for %d: bad inode %+v", id, n)
		}
	}
	for id, n := range s.inodes {
		if id >= s.nextID {
			return fmt.Errorf("inode %d not below the next id %d", id, s.nextID)
		}
		if n.Parent == 0 && !roots[id] && !s.purge[id] {
			return fmt.Errorf("inode %+v has no parent and is no root", n)
		}
		if d, ok := s.dentries[n.Parent][n.Name]; n.Parent != 0 && (!ok || d.Child != id) {
			return fmt.Errorf("inode %+v: no dentry points to it", n)
		}
	}
	return nil
}

// checkReachable walks from every namespace root and purge root and
// requires every inode to be reached exactly once; it recounts the
// aggregates of the directories under namespace roots.
func (s *raw) checkReachable() error {
	seen := map[uint64]bool{}
	var walk func(id uint64, live bool) (files, dirs, length uint64, err error)
	walk = func(id uint64, live bool) (files, dirs, length uint64, err error) {
		if seen[id] {
			return 0, 0, 0, fmt.Errorf("inode %d reached twice", id)
		}
		seen[id] = true
		n := s.inodes[id]
		if !n.IsDir() {
			return 1, 0, n.Length, nil
		}
		for _, d := range s.dentries[id] {
			f, dd, l, err := walk(d.Child, live)
			if err != nil {
				return 0, 0, 0, err
			}
			files, dirs, length = files+f, dirs+dd, length+l
		}
		if live && (n.Children != uint64(len(s.dentries[id])) || n.SubFiles != files ||
			n.SubDirs != dirs || n.SubLength != length) {
			return 0, 0, 0, fmt.Errorf("directory %d %q: children %d files %d dirs %d length %d, recount %d %d %d %d",
				id, n.Name, n.Children, n.SubFiles, n.SubDirs, n.SubLength, len(s.dentries[id]), files, dirs, length)
		}
		return files, dirs + 1, length, nil
	}
	for _, ns := range s.namespaces {
		if _, _, _, err := walk(ns.Root, true); err != nil {
			return err
		}
	}
	for id := range s.purge {
		if _, _, _, err := walk(id, false); err != nil {
			return err
		}
	}
	for id, n := range s.inodes {
		if !seen[id] {
			return fmt.Errorf("orphan inode %+v", n)
		}
	}
	return nil
}

func (s *raw) checkFiles() error {
	for l := range s.leases {
		if n := s.inodes[l.ino]; n == nil || n.IsDir() || n.Holder != l.holder {
			return fmt.Errorf("lease %+v on inode %+v", l, n)
		}
	}
	for id := range s.inline {
		if n := s.inodes[id]; n == nil || !n.Inline {
			return fmt.Errorf("inline content of inode %+v", n)
		}
	}
	for id := range s.blocks {
		if n := s.inodes[id]; n == nil || n.IsDir() {
			return fmt.Errorf("blocks of inode %+v", n)
		}
	}
	for id, n := range s.inodes {
		if n.IsDir() {
			if n.Holder != "" || n.Inline || n.Blocks != 0 || n.Length != 0 {
				return fmt.Errorf("directory with file attributes: %+v", n)
			}
			continue
		}
		if n.Children != 0 || n.SubFiles != 0 || n.SubDirs != 0 || n.SubLength != 0 {
			return fmt.Errorf("file with directory attributes: %+v", n)
		}
		if n.Holder != "" && !s.leases[lease{n.Holder, id}] {
			return fmt.Errorf("file %+v has no lease key", n)
		}
		if err := s.checkContent(n); err != nil {
			return err
		}
	}
	return nil
}

func (s *raw) checkContent(n *kvschema.Inode) error {
	if n.Inline {
		if n.Blocks != 0 || uint64(len(s.inline[n.ID])) != n.Length {
			return fmt.Errorf("inline file %+v with %d bytes", n, len(s.inline[n.ID]))
		}
		return nil
	}
	var off uint64
	for i := range n.Blocks {
		b, ok := s.blocks[n.ID][i]
		if !ok || b.Offset != off {
			return fmt.Errorf("file %+v: block %d is %+v", n, i, b)
		}
		off += b.Length
	}
	if off != n.Length || len(s.blocks[n.ID]) != int(n.Blocks) {
		return fmt.Errorf("file %+v: blocks cover %d in %d records", n, off, len(s.blocks[n.ID]))
	}
	return nil
}

// checkExtensions: extended attributes belong to inodes that say they
// have some, and only directories have quotas.
func (s *raw) checkExtensions() error {
	for id, count := range s.xattrs {
		if n := s.inodes[id]; n == nil || !n.XAttrs {
			return fmt.Errorf("%d extended attributes of inode %+v", count, n)
		}
	}
	for id, n := range s.inodes {
		if n.XAttrs && s.xattrs[id] == 0 {
			return fmt.Errorf("inode %+v says it has extended attributes and has none", n)
		}
		if n.Quota != nil && !n.IsDir() {
			return fmt.Errorf("a file with a quota: %+v", n)
		}
	}
	return nil
}
