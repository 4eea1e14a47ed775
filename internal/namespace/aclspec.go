package namespace

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stratafs/strata/internal/kvschema"
)

// HDFS's AclTransformation: each operation takes the existing (logical,
// sorted) ACL and a spec, untrusted and unsorted, and returns the new ACL
// or HDFS's AclException text. Masks are recalculated per scope when the
// caller does not give one, and a default ACL missing its owner, group or
// other entry takes the access ACL's.

// maxACLName bounds the name of a named entry (HDFS's user and group
// names are short; this one keeps hostile specs small).
const maxACLName = 256

// aclSpec is a validated, sorted spec.
type aclSpec []ACLEntry

func newACLSpec(in []ACLEntry) (aclSpec, error) {
	if len(in) > kvschema.MaxACLEntries {
		return nil, aclErr(fmt.Sprintf("Invalid ACL: ACL spec has %d entries, which exceeds maximum of %d.",
			len(in), kvschema.MaxACLEntries))
	}
	for _, e := range in {
		if e.Type < kvschema.ACLUser || e.Type > kvschema.ACLOther || e.Perm > 7 {
			return nil, aclErr("Invalid ACL: an entry of an unknown type or permission.")
		}
		if len(e.Name) > maxACLName || !utf8.ValidString(e.Name) || strings.ContainsAny(e.Name, ":,\x00\n") {
			return nil, aclErr(fmt.Sprintf("Invalid ACL: the name of an entry is at most %d bytes of UTF-8 without ':', ',' or a newline.",
				maxACLName))
		}
	}
	s := slices.Clone(in)
	slices.SortStableFunc(s, ACLEntry.Compare)
	return aclSpec(s), nil
}

// find returns the spec's entry with e's scope, type and name.
func (s aclSpec) find(e ACLEntry) (ACLEntry, bool) {
	i, ok := slices.BinarySearchFunc(s, e, ACLEntry.Compare)
	if !ok {
		return ACLEntry{}, false
	}
	return s[i], true
}

// masks is the per-scope mask bookkeeping of a transformation.
type masks struct {
	provided              [2]*ACLEntry
	maskDirty, scopeDirty [2]bool
}

func (m *masks) dirty(e ACLEntry) {
	m.scopeDirty[scope(e)] = true
	if e.Type == kvschema.ACLMask {
		m.maskDirty[scope(e)] = true
	}
}

func (m *masks) provide(e ACLEntry) {
	e2 := e
	m.provided[scope(e)] = &e2
}

// filterACLEntries removes the entries the spec names (removeAclEntries).
func filterACLEntries(existing []ACLEntry, in []ACLEntry) ([]ACLEntry, error) {
	spec, err := newACLSpec(in)
	if err != nil {
		return nil, err
	}
	var m masks
	var b []ACLEntry
	for _, e := range existing {
		switch _, named := spec.find(e); {
		case named:
			m.dirty(e)
		case e.Type == kvschema.ACLMask:
			m.provide(e)
		default:
			b = append(b, e)
		}
	}
	return finishACL(b, &m)
}

// filterDefaultACL removes the default entries (removeDefaultAcl).
func filterDefaultACL(existing []ACLEntry) ([]ACLEntry, error) {
	access, _ := splitScopes(existing)
	return buildACL(slices.Clone(access))
}

// mergeACLEntries adds the spec's entries, replacing those of the same
// scope, type and name (modifyAclEntries).
func mergeACLEntries(existing []ACLEntry, in []ACLEntry) ([]ACLEntry, error) {
	spec, err := newACLSpec(in)
	if err != nil {
		return nil, err
	}
	var m masks
	var b, found []ACLEntry
	for _, e := range existing {
		se, ok := spec.find(e)
		if ok {
			found = append(found, se)
			m.dirty(se)
		} else {
			se = e
		}
		if se.Type == kvschema.ACLMask {
			m.provide(se)
		} else {
			b = append(b, se)
		}
	}
	for _, e := range spec {
		if slices.ContainsFunc(found, func(f ACLEntry) bool { return f.Compare(e) == 0 }) {
			continue
		}
		m.dirty(e)
		if e.Type == kvschema.ACLMask {
			m.provide(e)
		} else {
			b = append(b, e)
		}
	}
	return finishACL(b, &m)
}

// replaceACL replaces each scope the spec has entries of (setAcl): a spec
// of access entries only keeps the default ACL, and the other way round.
func replaceACL(existing []ACLEntry, in []ACLEntry) ([]ACLEntry, error) {
	spec, err := newACLSpec(in)
	if err != nil {
		return nil, err
	}
	var m masks
	var b []ACLEntry
	for _, e := range spec {
		m.dirty(e)
		if e.Type == kvschema.ACLMask {
			m.provide(e)
		} else {
			b = append(b, e)
		}
	}
	for _, e := range existing {
		switch {
		case m.scopeDirty[scope(e)]:
		case e.Type == kvschema.ACLMask:
			m.provide(e)
		default:
			b = append(b, e)
		}
	}
	return finishACL(b, &m)
}

func finishACL(b []ACLEntry, m *masks) ([]ACLEntry, error) {
	b = copyDefaultsIfNeeded(b)
	b, err := calculateMasks(b, m)
	if err != nil {
		return nil, err
	}
	return buildACL(b)
}

// buildACL sorts b and checks it is a valid ACL (buildAndValidateAcl).
func buildACL(b []ACLEntry) ([]ACLEntry, error) {
	if len(b) > kvschema.MaxACLEntries {
		return nil, aclErr(fmt.Sprintf("Invalid ACL: ACL has %d entries, which exceeds maximum of %d.", len(b), kvschema.MaxACLEntries))
	}
	slices.SortStableFunc(b, ACLEntry.Compare)
	for i, e := range b {
		if i > 0 && b[i-1].Compare(e) == 0 {
			return nil, aclErr("Invalid ACL: multiple entries with same scope, type and name.")
		}
		if e.Name != "" && (e.Type == kvschema.ACLMask || e.Type == kvschema.ACLOther) {
			return nil, aclErr("Invalid ACL: this entry type must not have a name: " + ACLString(e) + ".")
		}
	}
	hasDefault := slices.ContainsFunc(b, func(e ACLEntry) bool { return e.Default })
	for _, t := range []kvschema.ACLType{kvschema.ACLUser, kvschema.ACLGroup, kvschema.ACLOther} {
		if _, ok := slices.BinarySearchFunc(b, ACLEntry{Type: t}, ACLEntry.Compare); !ok {
			return nil, aclErr("Invalid ACL: the user, group and other entries are required.")
		}
		if _, ok := slices.BinarySearchFunc(b, ACLEntry{Default: true, Type: t}, ACLEntry.Compare); hasDefault && !ok {
			return nil, aclErr("Invalid default ACL: the user, group and other entries are required.")
		}
	}
	return b, nil
}

// calculateMasks adds each scope's mask: the one given, unless the scope
// changed without a mask given (then the union of the group class's
// entries), and refuses a mask removed from a scope with named entries.
func calculateMasks(b []ACLEntry, m *masks) ([]ACLEntry, error) {
	var found, needed [2]bool
	var union [2]uint8
	for _, e := range b {
		s := scope(e)
		found[s] = true
		if e.Type == kvschema.ACLGroup || e.Name != "" {
			union[s] |= e.Perm
		}
		if e.Name != "" {
			needed[s] = true
		}
	}
	for s := range 2 {
		switch {
		case !found[s]:
		case m.provided[s] == nil && needed[s] && m.maskDirty[s]:
			return nil, aclErr("Invalid ACL: mask is required, but it was deleted.")
		case m.provided[s] != nil && (!m.scopeDirty[s] || m.maskDirty[s]):
			b = append(b, *m.provided[s])
		case needed[s]:
			b = append(b, ACLEntry{Default: s == 1, Type: kvschema.ACLMask, Perm: union[s]})
		}
	}
	return b, nil
}

// copyDefaultsIfNeeded gives a default ACL the owner's, group's and
// other's entries it lacks, copied from the access ACL.
func copyDefaultsIfNeeded(b []ACLEntry) []ACLEntry {
	slices.SortStableFunc(b, ACLEntry.Compare)
	access, defaults := splitScopes(b)
	if len(defaults) == 0 {
		return b
	}
	var copied []ACLEntry
	for _, t := range []kvschema.ACLType{kvschema.ACLUser, kvschema.ACLGroup, kvschema.ACLOther} {
		if _, ok := slices.BinarySearchFunc(defaults, ACLEntry{Default: true, Type: t}, ACLEntry.Compare); ok {
			continue
		}
		if i, ok := slices.BinarySearchFunc(access, ACLEntry{Type: t}, ACLEntry.Compare); ok {
			copied = append(copied, ACLEntry{Default: true, Type: t, Perm: access[i].Perm})
		}
	}
	return append(b, copied...)
}
