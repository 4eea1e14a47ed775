package fsshell

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stratafs/strata/internal/client"
)

// permString is FsPermission.toString: "rwxr-xr-x", the last letter t or T
// when the sticky bit is set. HDFS has no setuid or setgid.
func permString(perm uint32) string { return string(appendPerm(nil, perm)) }

// permOctal is FsPermission.toOctal, which -stat %a prints: the digits of
// the octal mode as a decimal number, so 0755 is "755" and 0007 is "7".
func permOctal(perm uint32) string {
	n := (perm>>9&1)*1000 + (perm>>6&7)*100 + (perm>>3&7)*10 + perm&7
	return strconv.Itoa(int(n))
}

// humanSize is StringUtils.TraditionalBinaryPrefix.long2String(n, "", 1):
// "1023", "1 K", "1.5 K", "64 M", rounding the one decimal half up.
func humanSize(n uint64) string {
	const symbols = "KMGTPE"
	if n < 1024 {
		return strconv.FormatUint(n, 10)
	}
	shift := uint(10)
	for shift < 60 && n >= 1<<(shift+10) {
		shift += 10
	}
	sym := symbols[shift/10-1]
	unit := uint64(1) << shift
	if n&(unit-1) == 0 {
		return fmt.Sprintf("%d %c", n>>shift, sym)
	}
	tenths := roundTenths(n, unit)
	if tenths >= 10240 && shift < 60 { // "1024.0 K" is "1.0 M"
		shift += 10
		sym, unit = symbols[shift/10-1], uint64(1)<<shift
		tenths = roundTenths(n, unit)
	}
	return fmt.Sprintf("%d.%d %c", tenths/10, tenths%10, sym)
}

// roundTenths is n/unit in tenths, rounded half up as Java's %.1f does.
func roundTenths(n, unit uint64) uint64 {
	hi, lo := bits.Mul64(n, 20)
	lo, carry := bits.Add64(lo, unit, 0)
	q, _ := bits.Div64(hi+carry, lo, 2*unit)
	return q
}

// printable is Hadoop's PrintableString: what -ls -q prints, with '?' for
// control, format, private-use, surrogate, unassigned and invalid code points.
// -ls always prints names so, -q or not, so that an entry is one line.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || !(unicode.IsGraphic(r) || unicode.In(r, unicode.Zl, unicode.Zp)) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lsFormat lays out -ls lines as Ls.adjustColumnWidths: the widths only
// grow, over every group of entries the command prints.
type lsFormat struct {
	maxRepl, maxLen, maxOwner, maxGroup int
	human, atime                        bool
	loc                                 *time.Location
	num                                 [20]byte // appendLine's numbers
}

func newLsFormat(loc *time.Location) *lsFormat {
	return &lsFormat{maxRepl: 3, maxLen: 10, loc: loc}
}

// adjust widens the columns for the entries about to be printed.
func (f *lsFormat) adjust(items []*pathData) {
	for _, it := range items {
		st := it.st
		f.maxRepl = max(f.maxRepl, digits(uint64(st.Replication)))
		f.maxLen = max(f.maxLen, digits(st.Length))
		f.maxOwner = max(f.maxOwner, len(st.Owner))
		f.maxGroup = max(f.maxGroup, len(st.Group))
	}
}

// line is one entry: type and permission, replication ("-" for a
// directory), owner, group, size, date "yyyy-MM-dd HH:mm" and path.
func (f *lsFormat) line(text string, st *client.FileStatus) string {
	return string(f.appendLine(nil, text, st))
}

// appendLine appends line's text to b: -ls -R of millions of entries
// formats each without fmt, and the path without a copy when it is
// printable ASCII, as almost every path is.
func (f *lsFormat) appendLine(b []byte, text string, st *client.FileStatus) []byte {
	typ, repl := byte('-'), ""
	if st.IsDir {
		typ, repl = 'd', "-"
	}
	b = appendPerm(append(b, typ), st.Perm)
	if st.HasACL {
		b = append(b, '+') // Ls's mark of an ACL
	} else {
		b = append(b, ' ')
	}
	if repl == "" {
		b = appendRight(b, strconv.AppendUint(f.num[:0], uint64(st.Replication), 10), f.maxRepl)
	} else {
		b = appendRight(b, []byte(repl), f.maxRepl)
	}
	b = appendPadded(append(b, ' '), st.Owner, f.maxOwner)
	b = appendPadded(b, st.Group, f.maxGroup)
	if f.human {
		b = appendRight(b, []byte(humanSize(st.Length)), f.maxLen)
	} else {
		b = appendRight(b, strconv.AppendUint(f.num[:0], st.Length, 10), f.maxLen)
	}
	t := st.ModTime
	if f.atime {
		t = st.AccTime
	}
	b = appendMinute(append(b, ' '), t.In(f.loc))
	return appendPrintable(append(b, ' '), text)
}

// digits is len(strconv.FormatUint(v, 10)).
func digits(v uint64) int {
	n := 1
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// appendPerm appends permString(perm).
func appendPerm(b []byte, perm uint32) []byte {
	const rwx = "rwx"
	for i := range 9 {
		c := byte('-')
		if perm&(1<<(8-i)) != 0 {
			c = rwx[i%3]
		}
		if i == 8 && perm&0o1000 != 0 {
			c = 'T'
			if perm&1 != 0 {
				c = 't'
			}
		}
		b = append(b, c)
	}
	return b
}

// appendRight appends s right-aligned in width (fmt's %*s).
func appendRight(b, s []byte, width int) []byte {
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// appendPadded appends s as Java's "%-Ns " for N > 0 and "%s" for N == 0.
func appendPadded(b []byte, s string, width int) []byte {
	b = append(b, s...)
	if width == 0 {
		return b
	}
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, ' ')
}

// appendMinute appends t as "2006-01-02 15:04".
func appendMinute(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02 15:04")
	}
	h, mi, _ := t.Clock()
	b = appendDigits(b, y, 4)
	b = appendDigits(append(b, '-'), int(mo), 2)
	b = appendDigits(append(b, '-'), d, 2)
	b = appendDigits(append(b, ' '), h, 2)
	return appendDigits(append(b, ':'), mi, 2)
}

func appendDigits(b []byte, v, width int) []byte {
	var buf [4]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, buf[:width]...)
}

// appendPrintable appends printable(s).
func appendPrintable(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return append(b, printable(s)...)
		}
	}
	return append(b, s...)
}

// table is FsUsage's TableBuilder: columns as wide as their widest cell,
// two spaces apart, left-aligned, without trailing spaces.
type table struct {
	rows   [][]string
	widths []int
	header bool
	right  []bool // the columns aligned right (FsUsage.TableBuilder.setRightAlign)
}

func newTable(columns int, header ...string) *table {
	t := &table{widths: make([]int, columns)}
	if len(header) > 0 {
		t.add(header...)
		t.header = true
	}
	return t
}

func (t *table) add(cells ...string) {
	for i, c := range cells {
		t.widths[i] = max(t.widths[i], len(c))
	}
	t.rows = append(t.rows, cells)
}

// empty reports whether the table has no rows besides its header.
func (t *table) empty() bool {
	return len(t.rows) == 0 || (t.header && len(t.rows) == 1)
}

func (t *table) String() string {
	if t.empty() {
		return ""
	}
	var b strings.Builder
	for _, row := range t.rows {
		for i, c := range row {
			switch {
			case i < len(t.right) && t.right[i]:
				fmt.Fprintf(&b, "%*s", t.widths[i], c)
			case i == len(row)-1:
				b.WriteString(c)
			default:
				fmt.Fprintf(&b, "%-*s", t.widths[i], c)
			}
			if i < len(row)-1 {
				b.WriteString("  ")
			} else {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// The -count layouts: ContentSummary's and QuotaUsage's formats.
const (
	countFormat = "%12s %12s %18s "
	quotaFormat = "%12s %15s %15s %15s "
)

var (
	countHeader = fmt.Sprintf(countFormat, "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE")
	quotaHeader = fmt.Sprintf(quotaFormat, "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA")
	// noQuotas is how QuotaUsage prints a directory without quotas.
	noQuotas = fmt.Sprintf(quotaFormat, "none", "inf", "none", "inf")
)

// countLine is ContentSummary.toString(qOption, hOption) before the path.
func countLine(sum *client.ContentSummary, quotas, human bool) string {
	size := func(n uint64) string {
		if human {
			return humanSize(n)
		}
		return strconv.FormatUint(n, 10)
	}
	prefix := ""
	if quotas {
		prefix = quotaLine(sum, human)
	}
	return prefix + fmt.Sprintf(countFormat, size(sum.DirectoryCount), size(sum.FileCount), size(sum.Length))
}

// quotaLine is QuotaUsage.getQuotaUsage: a name quota shows if above 0, a
// space quota if at least 0, each with what remains of it (below 0 once
// exceeded); "none" and "inf" otherwise.
func quotaLine(sum *client.ContentSummary, human bool) string {
	if sum.Quota == nil {
		return noQuotas
	}
	size := func(n int64) string {
		if human {
			return humanSigned(n)
		}
		return strconv.FormatInt(n, 10)
	}
	q, rem, sq, srem := "none", "inf", "none", "inf"
	if n := sum.Quota.Names; n > 0 {
		q, rem = size(n), size(n-int64(sum.FileCount+sum.DirectoryCount))
	}
	if s := sum.Quota.Space; s >= 0 {
		sq, srem = size(s), size(s-int64(sum.SpaceConsumed))
	}
	return fmt.Sprintf(quotaFormat, q, rem, sq, srem)
}

// humanSigned is humanSize of a count that may be negative (a quota
// exceeded), as long2String writes it: the sign, then the size.
func humanSigned(n int64) string {
	if n < 0 {
		return "-" + humanSize(uint64(-n))
	}
	return humanSize(uint64(n))
}

// statTime is -stat's date: UTC, "yyyy-MM-dd HH:mm:ss".
func statTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// formatStat expands a -stat format for one path as Stat.processPath:
// unknown conversions print their letter, a trailing % is dropped.
func formatStat(format, name string, st *client.FileStatus) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		if i+1 == len(format) {
			break
		}
		i++
		b.WriteString(statField(format[i], name, st))
	}
	return b.String()
}

func statField(c byte, name string, st *client.FileStatus) string {
	switch c {
	case 'a':
		return permOctal(st.Perm)
	case 'A':
		return permString(st.Perm)
	case 'b':
		return strconv.FormatUint(st.Length, 10)
	case 'F':
		if st.IsDir {
			return "directory"
		}
		return "regular file"
	case 'g':
		return st.Group
	case 'n':
		return name
	case 'o':
		return strconv.FormatUint(st.BlockSize, 10)
	case 'r':
		return strconv.FormatUint(uint64(st.Replication), 10)
	case 'u':
		return st.Owner
	case 'x':
		return statTime(st.AccTime)
	case 'X':
		return strconv.FormatInt(st.AccTime.UnixMilli(), 10)
	case 'y':
		return statTime(st.ModTime)
	case 'Y':
		return strconv.FormatInt(st.ModTime.UnixMilli(), 10)
	}
	return string(c)
}
