package fsshell

import (
	"fmt"
	"strings"

	"github.com/stratafs/strata/internal/client"
)

// -getfacl and -setfacl: Hadoop's AclCommands, over the service's HDFS
// ACLs, printing what FsShell prints for HDFS.

func init() {
	register(
		&command{name: "getfacl", usage: "[-R] <path>", run: runGetfacl, desc: `
Displays the Access Control Lists (ACLs) of files and directories. If a
directory has a default ACL, then getfacl also displays the default ACL.

-R      List the ACLs of all files and directories recursively.
<path>  File or directory to list.`},
		&command{name: "setfacl", usage: "[-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]",
			run: runSetfacl, desc: `
Sets Access Control Lists (ACLs) of files and directories.
Options:

-b          Remove all but the base ACL entries. The entries for user, group
            and others are retained for compatibility with permission bits.
-k          Remove the default ACL.
-R          Apply operations to all files and directories recursively.
-m          Modify ACL. New entries are added to the ACL, and existing entries
            are retained.
-x          Remove specified ACL entries. Other ACL entries are retained.
--set       Fully replace the ACL, discarding all existing entries. The
            <acl_spec> must include entries for user, group, and others for
            compatibility with permission bits. If the ACL spec contains only
            access entries, then the existing default entries are retained.
            If the ACL spec contains only default entries, then the existing
            access entries are retained. If the ACL spec contains both access
            and default entries, then both are replaced.
<acl_spec>  Comma separated list of ACL entries.
<path>      File or directory to modify.`},
	)
}

// runGetfacl is -getfacl [-R] <path>.
func runGetfacl(sh *shell, args []string) error {
	cf := newFormat(0, unbounded, "R")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := oneArgument(args); err != nil {
		return err
	}
	return sh.eachRecursive(args, cf.opt("R"), func(p *pathData) error {
		var entries []client.ACLEntry
		if p.st.HasACL {
			st, err := sh.fs.ACLStatus(sh.ctx, p.uri())
			if err != nil {
				return sh.explain(p.text, p.abs, err)
			}
			entries = st.Entries
		}
		sh.printf("%s", formatFacl(p.text, p.st, entries))
		return nil
	})
}

// oneArgument is the check of the ACL and attribute commands: exactly one
// path, in their words.
func oneArgument(args []string) error {
	switch {
	case len(args) == 0:
		return usagef("<path> is missing")
	case len(args) > 1:
		return usagef("Too many arguments")
	}
	return nil
}

// formatFacl is what GetfaclCommand prints of a path: its owner, group,
// flags, then its ACL as AclUtil.getAclFromPermAndEntries makes it of the
// mode and entries, access then default, each entry's effective
// permission after the mask where the mask restricts it.
func formatFacl(text string, st *client.FileStatus, entries []client.ACLEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# file: %s\n# owner: %s\n# group: %s\n", text, st.Owner, st.Group)
	if st.Perm&0o1000 != 0 {
		t := "T"
		if st.Perm&1 != 0 {
			t = "t"
		}
		fmt.Fprintf(&b, "# flags: --%s\n", t)
	}
	access, defaults := aclFromPermAndEntries(st.Perm, entries)
	writeScope(&b, access)
	writeScope(&b, defaults)
	b.WriteString("\n")
	return b.String()
}

func aclFromPermAndEntries(perm uint32, entries []client.ACLEntry) (access, defaults []client.ACLEntry) {
	access = append(access, client.ACLEntry{Type: client.ACLUser, Perm: uint8(perm >> 6 & 7)})
	i := 0
	for ; i < len(entries) && !entries[i].Default; i++ {
		access = append(access, entries[i])
	}
	groupClass := client.ACLGroup
	if i > 0 {
		groupClass = client.ACLMask
	}
	access = append(access, client.ACLEntry{Type: groupClass, Perm: uint8(perm >> 3 & 7)},
		client.ACLEntry{Type: client.ACLOther, Perm: uint8(perm & 7)})
	return access, entries[i:]
}

func writeScope(b *strings.Builder, entries []client.ACLEntry) {
	if len(entries) == 0 {
		return
	}
	var mask uint8 = 7
	if len(entries) != 3 {
		mask = entries[len(entries)-2].Perm
	}
	for _, e := range entries {
		s := aclString(e)
		if eff := e.Perm & mask; (e.Name != "" || e.Type == client.ACLGroup) && eff != e.Perm {
			s += "\t#effective:" + actionString(eff)
		}
		b.WriteString(s + "\n")
	}
}

// aclString is AclEntry.toStringStable: "default:user:bruce:rwx".
func aclString(e client.ACLEntry) string {
	scope := ""
	if e.Default {
		scope = "default:"
	}
	return scope + aclTypeNames[e.Type] + ":" + e.Name + ":" + actionString(e.Perm)
}

var aclTypeNames = map[client.ACLType]string{client.ACLUser: "user", client.ACLGroup: "group", client.ACLMask: "mask",
	client.ACLOther: "other"}

// actionString is FsAction's SYMBOL: "r-x".
func actionString(p uint8) string {
	b := []byte("---")
	for i, c := range "rwx" {
		if p&(4>>i) != 0 {
			b[i] = byte(c)
		}
	}
	return string(b)
}

// runSetfacl is -setfacl [-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set
// <acl_spec> <path>].
func runSetfacl(sh *shell, args []string) error {
	cf := newFormat(0, unbounded, "b", "k", "R", "m", "x", "-set")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	op, modify, err := setfaclOp(cf)
	if err != nil {
		return err
	}
	var spec []client.ACLEntry
	if modify {
		if len(args) < 2 {
			return usagef("<acl_spec> is missing")
		}
		if spec, err = parseACLSpec(args[0], !cf.opt("x")); err != nil {
			return err
		}
		args = args[1:]
	}
	if err := oneArgument(args); err != nil {
		return err
	}
	return sh.eachRecursive(args, cf.opt("R"), func(p *pathData) error {
		entries := spec
		if cf.opt("R") && !p.isDir() {
			entries = accessOnly(spec) // only directories have default ACLs
		}
		if op == 0 || modify && len(entries) == 0 {
			return nil
		}
		if err := sh.fs.ModifyACL(sh.ctx, p.uri(), op, entries); err != nil {
			return sh.explainOwner(p, err)
		}
		return nil
	})
}

// setfaclOp is the operation -setfacl's flags ask for, and whether it
// takes an ACL spec.
func setfaclOp(cf *cmdFormat) (client.ACLOp, bool, error) {
	b, k, m, x, set := cf.opt("b"), cf.opt("k"), cf.opt("m"), cf.opt("x"), cf.opt("-set")
	remove, change := b || k, m || x
	if b && k || m && x || remove && change || set && (remove || change) {
		return 0, false, usagef("Specified flags contains both remove and modify flags")
	}
	switch {
	case b:
		return client.ACLRemove, false, nil
	case k:
		return client.ACLRemoveDefault, false, nil
	case m:
		return client.ACLModify, true, nil
	case x:
		return client.ACLRemoveEntries, true, nil
	case set:
		return client.ACLSet, true, nil
	}
	return 0, false, nil // as in Hadoop, no flag does nothing to each path
}

func accessOnly(spec []client.ACLEntry) []client.ACLEntry {
	var out []client.ACLEntry
	for _, e := range spec {
		if !e.Default {
			out = append(out, e)
		}
	}
	return out
}

// parseACLSpec is AclEntry.parseAclSpec: comma-separated entries
// "[default:]type:[name][:perm]", empty pieces skipped.
func parseACLSpec(spec string, withPerm bool) ([]client.ACLEntry, error) {
	var out []client.ACLEntry
	for _, s := range strings.Split(spec, ",") {
		if s == "" {
			continue
		}
		e, err := parseACLEntry(s, withPerm)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// parseACLEntry is AclEntry.parseAclEntry, split as Java's String.split
// splits: trailing empty fields dropped.
func parseACLEntry(s string, withPerm bool) (client.ACLEntry, error) {
	invalid := usagef("Invalid <aclSpec> : %s", s)
	f := strings.Split(s, ":")
	for len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	var e client.ACLEntry
	if len(f) > 0 && f[0] == "default" {
		e.Default, f = true, f[1:]
	}
	if len(f) == 0 {
		return e, invalid
	}
	t, ok := aclTypeOf(f[0])
	if !ok {
		return e, usagef("Invalid type of acl in <aclSpec> :%s", s)
	}
	e.Type, f = t, f[1:]
	if len(f) > 0 {
		e.Name, f = f[0], f[1:]
	}
	if withPerm {
		if len(f) == 0 {
			return e, invalid
		}
		p, ok := permOf(f[0])
		if !ok {
			return e, usagef("Invalid permission in <aclSpec> : %s", s)
		}
		e.Perm, f = p, f[1:]
	}
	if len(f) > 0 {
		return e, invalid
	}
	return e, nil
}

func aclTypeOf(s string) (client.ACLType, bool) {
	for t, name := range aclTypeNames {
		if strings.EqualFold(s, name) {
			return t, true
		}
	}
	return 0, false
}

// permOf is FsAction.getFsAction: an exact SYMBOL.
func permOf(s string) (uint8, bool) {
	for p := range uint8(8) {
		if actionString(p) == s {
			return p, true
		}
	}
	return 0, false
}
