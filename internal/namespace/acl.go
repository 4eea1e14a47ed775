package namespace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kvschema"
)

// ACLs are HDFS's POSIX ACLs, stored as HDFS stores them (AclStorage): the
// mode bits keep the owner's and other's entries and, once the access ACL
// has named entries, its mask in the group bits; the inode's ACL
// (kvschema.InodeExt) keeps the rest, sorted. The permission checker reads
// them (aclAllows); the operations change them through HDFS's
// transformations (AclTransformation), ported here rule for rule, so that
// a spec HDFS refuses is refused with HDFS's words and one it takes gives
// the same entries. An inode without an ACL costs the checker one length
// test.

// ACLEntry is one entry of an ACL.
type ACLEntry = kvschema.ACLEntry

// scope indexes per-scope state: access entries, then default ones.
func scope(e ACLEntry) int {
	if e.Default {
		return 1
	}
	return 0
}

// aclAllows is HDFS's hasAclPermission: the owner by the owner's bits; else
// a named user's entry, or the owning group's and named groups' entries
// the caller belongs to, each masked by the mask (the group bits): any
// that matches decides, and grants if one grants; else other's bits.
func aclAllows(c Caller, n *kvschema.Inode, want uint16) bool {
	if n.Owner == c.User {
		return (n.Perm>>6)&want == want
	}
	mask := uint8(n.Perm >> 3 & 7)
	matched := false
	for _, e := range n.ACL {
		if e.Default {
			break // default entries sort last and are not enforced
		}
		switch {
		case e.Type == kvschema.ACLUser && e.Name == c.User:
			return uint16(e.Perm&mask)&want == want
		case e.Type == kvschema.ACLGroup && inGroup(c, e.Name, n.Group):
			if uint16(e.Perm&mask)&want == want {
				return true
			}
			matched = true
		}
	}
	return !matched && n.Perm&want == want
}

func inGroup(c Caller, name, owning string) bool {
	if name == "" {
		name = owning
	}
	return slices.Contains(c.Groups, name)
}

// hasAccessACL reports whether n's ACL has access entries, which the
// checker then consults; default entries alone change nothing for n.
func hasAccessACL(n *kvschema.Inode) bool { return len(n.ACL) > 0 && !n.ACL[0].Default }

// logicalACL is n's whole ACL (HDFS's readINodeLogicalAcl): its mode bits
// as the owner, group or mask, and other entries, with the stored ones.
func logicalACL(n *kvschema.Inode) []ACLEntry {
	u, g, o := uint8(n.Perm>>6&7), uint8(n.Perm>>3&7), uint8(n.Perm&7)
	out := make([]ACLEntry, 0, len(n.ACL)+3)
	access := hasAccessACL(n)
	out = append(out, ACLEntry{Type: kvschema.ACLUser, Perm: u})
	if access {
		i := 0
		for ; i < len(n.ACL) && !n.ACL[i].Default; i++ {
			out = append(out, n.ACL[i])
		}
		out = append(out, ACLEntry{Type: kvschema.ACLMask, Perm: g}, ACLEntry{Type: kvschema.ACLOther, Perm: o})
		return append(out, n.ACL[i:]...)
	}
	out = append(out, ACLEntry{Type: kvschema.ACLGroup, Perm: g}, ACLEntry{Type: kvschema.ACLOther, Perm: o})
	return append(out, n.ACL...)
}

// setLogicalACL stores acl, a whole sorted ACL that buildACL validated, in
// n (HDFS's updateINodeAcl).
func setLogicalACL(n *kvschema.Inode, acl []ACLEntry) error {
	access, defaults := splitScopes(acl)
	if len(defaults) > 0 && !n.IsDir() {
		return aclErr("Invalid ACL: only directories may have a default ACL.")
	}
	n.ACL = featureEntries(access, defaults)
	n.Perm = permFromACL(access, n.Perm)
	return nil
}

// featureEntries is what an inode stores of an ACL (HDFS's
// createAclFeature): the access entries between the owner's and the
// mask, if there are named ones, and the default entries.
func featureEntries(access, defaults []ACLEntry) []ACLEntry {
	var out []ACLEntry
	if len(access) > 3 {
		out = append(out, access[1:len(access)-2]...)
	}
	out = append(out, defaults...)
	if len(out) == 0 {
		return nil
	}
	return out
}

// permFromACL is the mode of an inode whose access ACL is access: the
// owner's, the group class's (the mask, or the group's in a minimal ACL)
// and other's entries, keeping old's other bits (sticky).
func permFromACL(access []ACLEntry, old uint16) uint16 {
	return old&^0o777 | uint16(access[0].Perm)<<6 | uint16(access[len(access)-2].Perm)<<3 | uint16(access[len(access)-1].Perm)
}

func splitScopes(acl []ACLEntry) (access, defaults []ACLEntry) {
	i := slices.IndexFunc(acl, func(e ACLEntry) bool { return e.Default })
	if i < 0 {
		return acl, nil
	}
	return acl[:i], acl[i:]
}

// removeACL drops n's ACL (HDFS's removeINodeAcl): the owning group's
// entry goes back to the group bits, which held the mask.
func removeACL(n *kvschema.Inode) {
	for _, e := range n.ACL {
		if !e.Default && e.Type == kvschema.ACLGroup && e.Name == "" {
			n.Perm = n.Perm&^0o070 | uint16(e.Perm)<<3
			break
		}
	}
	n.ACL = nil
}

// inheritACL gives n, new in dir, dir's default ACL (HDFS's
// copyINodeDefaultAcl): n's mode, the caller's requested mode without the
// umask, filters the owner's, mask's and other's entries. It reports
// false, changing nothing, if dir has no default ACL.
func inheritACL(dir, n *kvschema.Inode) bool {
	_, defaults := splitScopes(dir.ACL)
	if len(defaults) == 0 {
		return false
	}
	mode := n.Perm
	minimal := len(defaults) == 3
	access := make([]ACLEntry, 0, len(defaults))
	for _, e := range defaults {
		p := e.Perm
		switch {
		case e.Type == kvschema.ACLUser && e.Name == "":
			p &= uint8(mode >> 6 & 7)
		case e.Type == kvschema.ACLGroup && minimal, e.Type == kvschema.ACLMask:
			p &= uint8(mode >> 3 & 7)
		case e.Type == kvschema.ACLOther:
			p &= uint8(mode & 7)
		}
		access = append(access, ACLEntry{Type: e.Type, Name: e.Name, Perm: p})
	}
	if !n.IsDir() {
		defaults = nil
	}
	n.ACL = featureEntries(access, slices.Clone(defaults))
	n.Perm = permFromACL(access, mode)
	return true
}

// hasDefaultACL reports whether dir gives its new children an ACL.
func hasDefaultACL(dir *kvschema.Inode) bool {
	return len(dir.ACL) > 0 && dir.ACL[len(dir.ACL)-1].Default
}

func aclErr(msg string) error { return fserr.Errorf(fserr.ErrInvalidACL, "%s", msg) }

// ACLString is an entry as HDFS's AclEntry.toString writes it, and as
// -getfacl prints it: "default:user:bruce:rwx".
func ACLString(e ACLEntry) string {
	var b strings.Builder
	if e.Default {
		b.WriteString("default:")
	}
	b.WriteString(ACLTypeName(e.Type))
	fmt.Fprintf(&b, ":%s:%s", e.Name, PermString(e.Perm))
	return b.String()
}

// ACLTypeName is an entry type as HDFS writes it: "user", "group", "mask",
// "other".
func ACLTypeName(t kvschema.ACLType) string {
	switch t {
	case kvschema.ACLUser:
		return "user"
	case kvschema.ACLGroup:
		return "group"
	case kvschema.ACLMask:
		return "mask"
	case kvschema.ACLOther:
		return "other"
	}
	return fmt.Sprintf("type%d", t)
}

// PermString is an rwx triplet as HDFS's FsAction.SYMBOL: "r-x".
func PermString(p uint8) string {
	b := []byte("---")
	for i, c := range "rwx" {
		if p&(4>>i) != 0 {
			b[i] = byte(c)
		}
	}
	return string(b)
}
