package fsshell

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/stratafs/strata/internal/fserr"
)

// modeChange is a -chmod mode as Hadoop's ChmodParser reads it. Each of
// user, group, others and the sticky bit gets an operation ('+', '-' or
// '=') and bits; a later clause for the same class replaces an earlier one.
type modeChange struct {
	ops  [4]byte   // sticky, user, group, others
	bits [4]uint32 // rwx as 4 2 1, X as 8; the sticky entry is 0 or 1
}

var (
	symbolicMode = regexp.MustCompile(`^\s*([ugoa]*)([+=-]+)([rwxXt]*)([,\s]*)\s*`)
	octalMode    = regexp.MustCompile(`^\s*[+]?([01]?)([0-7]{3})\s*$`)
)

// parseMode parses "u+x,g-w", "a=rX", "+t", "755" or "1777".
func parseMode(s string) (*modeChange, error) {
	m := &modeChange{ops: [4]byte{'+', '+', '+', '+'}}
	if symbolicMode.MatchString(s) {
		return m, m.symbolic(s)
	}
	sm := octalMode.FindStringSubmatch(s)
	if sm == nil {
		return nil, errors.New(s)
	}
	m.ops = [4]byte{'+', '=', '=', '='}
	if sm[1] != "" {
		m.ops[0], m.bits[0] = '=', uint32(sm[1][0]-'0')
	}
	for i := range 3 {
		m.bits[i+1] = uint32(sm[2][i] - '0')
	}
	return m, nil
}

// symbolic reads comma-separated clauses, as PermissionParser's
// applyNormalPattern.
func (m *modeChange) symbolic(s string) error {
	comma := false
	for pos, i := 0, 0; i == 0 || pos < len(s); i++ {
		sm := symbolicMode.FindStringSubmatchIndex(s[pos:])
		if i > 0 && (!comma || sm == nil) {
			return errors.New(s)
		}
		group := func(g int) string { return s[pos+sm[2*g] : pos+sm[2*g+1]] }
		m.clause(group(1), group(2), group(3))
		comma = strings.Contains(group(4), ",")
		pos += sm[1]
	}
	return nil
}

func (m *modeChange) clause(who, ops, perms string) {
	op := ops[len(ops)-1]
	var bits uint32
	sticky := uint32(0)
	for _, c := range perms {
		switch c {
		case 'r':
			bits |= 4
		case 'w':
			bits |= 2
		case 'x':
			bits |= 1
		case 'X':
			bits |= 8
		case 't':
			sticky = 1
		}
	}
	if who == "" || strings.Contains(who, "a") && !strings.ContainsAny(who, "ugo") {
		who = "ugo"
	}
	for i, class := range "ugo" {
		if strings.ContainsRune(who, class) {
			m.ops[i+1], m.bits[i+1] = op, bits
		}
	}
	if strings.ContainsRune(who, 'o') {
		m.ops[0], m.bits[0] = op, sticky
	}
}

// apply returns the mode that results from applying m to existing (the
// sticky bit and rwx triplets); X grants execute to directories and to
// files that some class may already execute.
func (m *modeChange) apply(existing uint32, isDir bool) uint32 {
	exeOK := isDir || existing&0o111 != 0
	out := combine(m.ops[0], m.bits[0], existing>>9&1, false) << 9
	for i, shift := range []uint{6, 3, 0} {
		out |= combine(m.ops[i+1], m.bits[i+1], existing>>shift&7, exeOK) << shift
	}
	return out
}

// combine is PermissionParser.combineModeSegments.
func combine(op byte, mode, existing uint32, exeOK bool) uint32 {
	capX := mode&8 != 0
	if capX {
		mode = mode&^8 | 1
	}
	switch op {
	case '+':
		mode |= existing
	case '-':
		mode = ^mode & existing
	}
	if capX && !exeOK && mode&1 != 0 && existing&1 == 0 {
		mode &^= 1
	}
	return mode
}

// runChmod is -chmod [-R] MODE PATH...; a path whose mode would not change
// is left alone.
func runChmod(sh *shell, args []string) error {
	cf := newFormat(2, unbounded, "R")
	cf.ignoreUnknown = true // "-w" is a mode
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	m, err := parseMode(args[0])
	if err != nil {
		return usagef("chmod : mode '%s' does not match the expected pattern.", args[0])
	}
	return sh.eachRecursive(args[1:], cf.opt("R"), func(p *pathData) error {
		perm := m.apply(p.st.Perm&0o1777, p.st.IsDir)
		if perm == p.st.Perm&0o1777 {
			return nil
		}
		if err := sh.fs.SetPermission(sh.ctx, p.uri(), perm); err != nil {
			return fmt.Errorf("changing permissions of '%s': %s", p.text, message(sh.explainOwner(p, err)))
		}
		return nil
	})
}

// eachRecursive runs fn on every path the arguments expand to and, when
// recursive, on everything below them.
func (sh *shell) eachRecursive(args []string, recursive bool, fn func(*pathData) error) error {
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		if !item.exists() {
			sh.fail(errNotFound(item.text))
			continue
		}
		sh.walk(item, recursive, fn)
	}
	return nil
}

// explainOwner explains an error of an operation only the owner (or a
// superuser) may do, in HDFS's words: the service's reason (not the owner;
// the owner, but not a superuser, giving the file away; or giving it to a
// group it is not in), or, from a service that gives none, not the owner.
func (sh *shell) explainOwner(p *pathData, err error) error {
	if errors.Is(err, fserr.ErrPermission) {
		if reason := detail(err); reason != fserr.ErrPermission.Error() {
			return errors.New(reason)
		}
		return fmt.Errorf("Permission denied. user=%s is not the owner of inode=%s", sh.user(), p.abs)
	}
	return sh.explain(p.text, p.abs, err)
}

// Owner and group names: digits, letters and any of -_./@.
var (
	chownSpec = regexp.MustCompile(`^\s*([-_./@a-zA-Z0-9]+)?([:]([-_./@a-zA-Z0-9]*))?\s*$`)
	chgrpSpec = regexp.MustCompile(`^\s*([-_./@a-zA-Z0-9]+)\s*$`)
)

// runChown is -chown [-R] [OWNER][:[GROUP]] PATH...
func runChown(sh *shell, args []string) error {
	cf := newFormat(2, unbounded, "R")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	sm := chownSpec.FindStringSubmatch(args[0])
	if sm == nil {
		return usagef("'%s' does not match expected pattern for [owner][:group].", args[0])
	}
	if sm[1] == "" && sm[3] == "" {
		return usagef("'%s' does not specify owner or group.", args[0])
	}
	return sh.chown(args[1:], cf.opt("R"), sm[1], sm[3])
}

// runChgrp is -chgrp [-R] GROUP PATH..., which is -chown :GROUP.
func runChgrp(sh *shell, args []string) error {
	cf := newFormat(2, unbounded, "R")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	sm := chgrpSpec.FindStringSubmatch(args[0])
	if sm == nil {
		return usagef("'%s' does not match expected pattern for group", args[0])
	}
	return sh.chown(args[1:], cf.opt("R"), "", sm[1])
}

// chown sets what differs of owner and group ("" leaves one alone).
func (sh *shell) chown(args []string, recursive bool, owner, group string) error {
	return sh.eachRecursive(args, recursive, func(p *pathData) error {
		o, g := owner, group
		if o == p.st.Owner {
			o = ""
		}
		if g == p.st.Group {
			g = ""
		}
		if o == "" && g == "" {
			return nil
		}
		if err := sh.fs.SetOwner(sh.ctx, p.uri(), o, g); err != nil {
			return fmt.Errorf("changing ownership of '%s': %s", p.text, message(sh.explainOwner(p, err)))
		}
		return nil
	})
}
