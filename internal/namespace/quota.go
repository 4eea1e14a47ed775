package namespace

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Quotas, as HDFS's: a directory may limit the names below it (itself
// included) and the bytes of the files below it. Every operation that
// grows a directory's aggregates checks the quotas of the directories it
// grows (adjust): a create, a mkdir, a rename's destination, a flush or
// close that commits more bytes. So the limits hold exactly, whatever the
// order the log applies concurrent operations in, and across failovers,
// from the aggregates the state keeps anyway: no walk, no counter of its
// own. NB: Strata counts a file's bytes once, since the bucket holds them
// once; HDFS counts them times their replication. A quota taken over from
// HDFS so allows at least what it did there.

// Quota values of SetQuota with HDFS's meanings: QuotaReset clears a limit,
// QuotaDontSet leaves it as it is.
const (
	QuotaReset   = kvschema.NoQuota
	QuotaDontSet = math.MaxInt64
)

// SetQuota sets the name and space quotas of directory path; only a
// superuser may. A limit below what the directory holds already is set
// all the same, as in HDFS: what would grow it further is refused.
func (fs *FS) SetQuota(tx kv.Txn, c Caller, ns, path string, names, space int64) error {
	if err := fs.setQuota(tx, c, ns, path, names, space); err != nil {
		return pathErr("setQuota", path, err)
	}
	return nil
}

func (fs *FS) setQuota(tx kv.Txn, c Caller, ns, path string, names, space int64) error {
	if !fs.IsSuperuser(c) {
		return fserr.Errorf(ErrPermission, "Access denied for user %s. Superuser privilege is required", c.User)
	}
	if !validQuota(names) || !validQuota(space) {
		return fserr.Errorf(ErrInvalidArgument, "Illegal value for nsQuota or ssQuota : %d and %d", names, space)
	}
	res, err := fs.resolveExisting(tx, c, ns, path)
	switch {
	case err != nil:
		return err
	case res.ns.IsCache():
		return fserr.Errorf(ErrUnsupported, "quotas need a block-mode namespace: what other programs write to a cache-mode namespace's bucket is not counted")
	case !res.node.IsDir():
		return fserr.Errorf(ErrNotDir, "Cannot set quota on a file: %s", path)
	}
	q := kvschema.Quota{Names: kvschema.NoQuota, Space: kvschema.NoQuota}
	if res.node.Quota != nil {
		q = *res.node.Quota
	}
	if names != QuotaDontSet {
		q.Names = names
	}
	if space != QuotaDontSet {
		q.Space = space
	}
	return SetDirQuota(tx, res.node, q)
}

func validQuota(v int64) bool { return v >= 0 || v == QuotaReset || v == QuotaDontSet }

// SetDirQuota records q as directory n's quotas (none if q limits
// nothing) and writes n: what SetQuota does once it has checked the
// caller, and what a bulk load (an HDFS image's import) does for each
// directory with quotas, with no check of what n holds.
func SetDirQuota(tx kv.Txn, n *kvschema.Inode, q kvschema.Quota) error {
	if !n.IsDir() {
		return ErrNotDir
	}
	if q.Names < kvschema.NoQuota || q.Space < kvschema.NoQuota {
		return ErrInvalidArgument
	}
	n.Quota = nil
	if q.Set() {
		n.Quota = &q
	}
	putInode(tx, n)
	return nil
}

// QuotaUsage is a directory's quotas and what counts against them.
type QuotaUsage struct {
	Quota kvschema.Quota // NoQuota for a limit not set
	// Names is the directory and everything below it; Space the bytes of
	// the files below it.
	Names, Space int64
}

// usageOf returns the quotas and usage of n; a file's quotas are none.
func usageOf(n *kvschema.Inode) QuotaUsage {
	u := QuotaUsage{Quota: kvschema.Quota{Names: kvschema.NoQuota, Space: kvschema.NoQuota}, Names: 1, Space: int64(n.Length)}
	if n.IsDir() {
		u.Names, u.Space = int64(n.SubFiles+n.SubDirs+1), int64(n.SubLength)
	}
	if n.Quota != nil {
		u.Quota = *n.Quota
	}
	return u
}

// grows reports whether d adds names or bytes: only what grows a
// directory is checked against its quotas (a delete never fails on one).
func (d delta) grows() bool { return d.files+d.dirs > 0 || d.length > 0 }

// checkQuota checks directory n, whose aggregates include d already,
// against its quotas, for the parts of d that grow it.
func checkQuota(r kv.Reader, n *kvschema.Inode, d delta) error {
	q, u := n.Quota, usageOf(n)
	if q.Names != kvschema.NoQuota && d.files+d.dirs > 0 && u.Names > q.Names {
		return fserr.Errorf(fserr.ErrNSQuotaExceeded,
			"The NameSpace quota (directories and files) of directory %s is exceeded: quota=%d file count=%d",
			dirPath(r, n), q.Names, u.Names)
	}
	if q.Space != kvschema.NoQuota && d.length > 0 && u.Space > q.Space {
		return dsQuotaError(r, n, u.Space)
	}
	return nil
}

func dsQuotaError(r kv.Reader, n *kvschema.Inode, used int64) error {
	q := n.Quota.Space
	return fserr.Errorf(fserr.ErrDSQuotaExceeded,
		"The DiskSpace quota of %s is exceeded: quota = %d B = %s but diskspace consumed = %d B = %s",
		dirPath(r, n), q, binaryPrefix(q, "B"), used, binaryPrefix(used, "B"))
}

// checkSpaceLeft refuses to reopen a file for writing under a directory
// whose space quota has no byte left: HDFS's append, which reserves the
// rest of the file's last block at once, fails so.
func checkSpaceLeft(r kv.Reader, dirs []*kvschema.Inode) error {
	for _, d := range dirs {
		if d.Quota != nil && d.Quota.Space != kvschema.NoQuota && int64(d.SubLength) >= d.Quota.Space {
			return dsQuotaError(r, d, int64(d.SubLength))
		}
	}
	return nil
}

// dirPath is the path of directory n in its namespace, for messages; "?"
// stands for a name it could not read.
func dirPath(r kv.Reader, n *kvschema.Inode) string {
	var names []string
	for n != nil && n.Parent != 0 {
		names = append(names, n.Name)
		next, err := getInode(r, n.Parent)
		if err != nil {
			names = append(names, "?")
			break
		}
		n = next
	}
	var b strings.Builder
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteString("/" + names[i])
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// binaryPrefix is Hadoop's StringUtils.TraditionalBinaryPrefix.long2String
// with two decimals, as HDFS's quota messages show sizes ("1.50 KB"):
// rounded half up, as Java's %.2f does.
func binaryPrefix(n int64, unit string) string {
	const symbols = "KMGTPE"
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	u := uint64(n)
	if u < 1024 {
		return fmt.Sprintf("%s%d %s", sign, u, unit)
	}
	shift := uint(10)
	for shift < 60 && u >= 1<<(shift+10) {
		shift += 10
	}
	if u&(1<<shift-1) == 0 {
		return fmt.Sprintf("%s%d %c%s", sign, u>>shift, symbols[shift/10-1], unit)
	}
	h := hundredths(u, 1<<shift)
	if h >= 102400 && shift < 60 { // "1024.00 K" is "1.00 M"
		shift += 10
		h = hundredths(u, 1<<shift)
	}
	return fmt.Sprintf("%s%d.%02d %c%s", sign, h/100, h%100, symbols[shift/10-1], unit)
}

// hundredths is n/unit in hundredths, rounded half up.
func hundredths(n, unit uint64) uint64 {
	hi, lo := bits.Mul64(n, 200)
	lo, carry := bits.Add64(lo, unit, 0)
	q, _ := bits.Div64(hi+carry, lo, 2*unit)
	return q
}
