package fsshell

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// -getfattr and -setfattr: Hadoop's XAttrCommands, with its XAttrCodec's
// encodings of values.

func init() {
	register(
		&command{name: "getfattr", usage: "[-R] {-n name | -d} [-e en] <path>", run: runGetfattr, desc: `
Displays the extended attribute names and values (if any) for a file or
directory.

-R             Recursively list the attributes for all files and directories.
-n name        Dump the named extended attribute value.
-d             Dump all extended attribute values associated with pathname.
-e <encoding>  Encode values after retrieving them.Valid encodings are "text",
               "hex", and "base64". Values encoded as text strings are enclosed
               in double quotes ("), and values encoded as hexadecimal and
               base64 are prefixed with 0x and 0s, respectively.
<path>         The file or directory.`},
		&command{name: "setfattr", usage: "{-n name [-v value] | -x name} <path>", run: runSetfattr, desc: `
Sets an extended attribute name and value for a file or directory.

-n name   The extended attribute name.
-v value  The extended attribute value. There are three different encoding
          methods for the value. If the argument is enclosed in double quotes,
          then the value is the string inside the quotes. If the argument is
          prefixed with 0x or 0X, then it is taken as a hexadecimal number. If
          the argument begins with 0s or 0S, then it is taken as a base64
          encoding.
-x name   Remove the extended attribute.
<path>    The file or directory.

A cache-mode namespace's files are its bucket's objects: they have no
extended attributes, and setting one is refused.`},
	)
}

// xattrCodecs are XAttrCodec's encodings, by the name -e takes.
var xattrCodecs = map[string]func([]byte) string{
	"TEXT":   func(v []byte) string { return `"` + string(v) + `"` },
	"HEX":    func(v []byte) string { return "0x" + hex.EncodeToString(v) },
	"BASE64": func(v []byte) string { return "0s" + base64.StdEncoding.EncodeToString(v) },
}

// runGetfattr is -getfattr [-R] {-n name | -d} [-e en] <path>.
func runGetfattr(sh *shell, args []string) error {
	name, args, named, err := popOptionWithArgument("-n", args)
	if err != nil {
		return err
	}
	en, args, _, err := popOptionWithArgument("-e", args)
	if err != nil {
		return err
	}
	encode := xattrCodecs["TEXT"]
	if en != "" {
		if encode = xattrCodecs[strings.ToUpper(en)]; encode == nil {
			return usagef("No enum constant org.apache.hadoop.fs.XAttrCodec.%s", strings.ToUpper(en))
		}
	}
	cf := newFormat(0, unbounded, "d", "R")
	if args, err = cf.parse(args); err != nil {
		return err
	}
	dump := cf.opt("d")
	if !dump && !named {
		return usagef("Must specify '-n name' or '-d' option.")
	}
	if err := oneArgument(args); err != nil {
		return err
	}
	if named && !dump {
		if err := checkXAttrName(name); err != nil {
			return err
		}
	}
	return sh.eachRecursive(args, cf.opt("R"), func(p *pathData) error {
		var names []string
		if !dump {
			names = []string{name}
		}
		sh.printf("# file: %s\n", p.text)
		all, err := sh.fs.GetXAttrs(sh.ctx, p.uri(), names...)
		if err != nil {
			return sh.explainXAttr(p, err)
		}
		for _, x := range all {
			if !dump {
				x.Name = name // printed as asked for
			}
			sh.printf("%s\n", formatXAttr(x, encode))
		}
		return nil
	})
}

// formatXAttr is GetfattrCommand's printXAttr: the name, and =value if
// there is one.
func formatXAttr(x client.XAttr, encode func([]byte) string) string {
	if len(x.Value) == 0 {
		return x.Name
	}
	return x.Name + "=" + encode(x.Value)
}

// runSetfattr is -setfattr {-n name [-v value] | -x name} <path>.
func runSetfattr(sh *shell, args []string) error {
	name, args, named, err := popOptionWithArgument("-n", args)
	if err != nil {
		return err
	}
	v, args, valued, err := popOptionWithArgument("-v", args)
	if err != nil {
		return err
	}
	xname, args, removing, err := popOptionWithArgument("-x", args)
	if err != nil {
		return err
	}
	switch {
	case named && removing:
		return usagef("Can not specify both '-n name' and '-x name' option.")
	case !named && !removing:
		return usagef("Must specify '-n name' or '-x name' option.")
	}
	if err := oneArgument(args); err != nil {
		return err
	}
	var value []byte
	if valued {
		if value, err = decodeXAttrValue(v); err != nil {
			return err
		}
	}
	if err := checkXAttrName(name + xname); err != nil {
		return err
	}
	return sh.eachRecursive(args, false, func(p *pathData) error {
		var err error
		if named {
			err = sh.fs.SetXAttr(sh.ctx, p.uri(), name, value, client.XAttrCreate|client.XAttrReplace)
		} else {
			err = sh.fs.RemoveXAttr(sh.ctx, p.uri(), xname)
		}
		if err != nil {
			return sh.explainXAttr(p, err)
		}
		return nil
	})
}

// explainXAttr says a refused use of an attribute in HDFS's words: the
// service's reason for one the caller may not use (a trusted. one).
func (sh *shell) explainXAttr(p *pathData, err error) error {
	if reason := detail(err); errors.Is(err, fserr.ErrPermission) && reason != fserr.ErrPermission.Error() {
		return errors.New(reason)
	}
	return sh.explain(p.text, p.abs, err)
}

// checkXAttrName is XAttrHelper.buildXAttr's check, which Hadoop's client
// makes before it asks the NameNode: an IllegalArgumentException, so a
// usage error.
func checkXAttrName(name string) error {
	i := strings.IndexByte(name, '.')
	ns := ""
	if i >= 0 {
		ns = strings.ToLower(name[:i])
	}
	switch {
	case i < 3 || !strings.Contains(" user trusted security system raw ", " "+ns+" "):
		return usagef("An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")
	case i == len(name)-1:
		return usagef("XAttr name cannot be empty.")
	}
	return nil
}

// decodeXAttrValue is XAttrCodec.decodeValue: "quoted" text, 0x hex, 0s
// base64, else the text itself.
func decodeXAttrValue(v string) ([]byte, error) {
	if len(v) >= 2 {
		switch prefix := strings.ToLower(v[:2]); {
		case v[0] == '"' && v[len(v)-1] == '"':
			return []byte(v[1 : len(v)-1]), nil
		case prefix == "0x":
			b, err := hex.DecodeString(v[2:])
			if err != nil {
				return nil, fmt.Errorf("org.apache.commons.codec.DecoderException: %v", hexError(v[2:]))
			}
			return b, nil
		case prefix == "0s":
			return lenientBase64(v[2:]), nil
		}
	}
	return []byte(v), nil
}

// hexError is commons-codec's Hex.decodeHex message for a bad value.
func hexError(s string) string {
	if len(s)%2 != 0 {
		return "Odd number of characters."
	}
	for i, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return fmt.Sprintf("Illegal hexadecimal character %c at index %d", c, i)
		}
	}
	return "invalid hexadecimal"
}

// lenientBase64 decodes as commons-codec's Base64.decode does: characters
// outside the alphabet are skipped, and so are padding and a last
// character that makes no byte.
func lenientBase64(s string) []byte {
	var clean strings.Builder
	for _, c := range s {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			clean.WriteRune(c)
		}
	}
	t := clean.String()
	if len(t)%4 == 1 {
		t = t[:len(t)-1]
	}
	b, _ := base64.RawStdEncoding.DecodeString(t)
	return b
}
