package scalebench

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/bench/metabench"
)

// Format lays rows out as the benchmark's table: one line a size.
func Format(rows []Row) string {
	head := []string{"files", "import/s", "import cpu µs", "create/s", "stat/s", "open/s", "rename/s", "delete/s",
		"RSS", "RSS B/file", "disk", "disk B/file", "restart", "kill -9", "cold", "ls -R", "lines", "count", "of"}
	out := [][]string{head}
	for _, r := range rows {
		line := []string{count(r.Files)}
		if r.Import.Inodes > 0 {
			line = append(line, count(uint64(float64(r.Import.Inodes)/r.Import.Elapsed.Seconds())),
				fmt.Sprintf("%.2f", float64(r.Import.CPU.Microseconds())/float64(r.Import.Inodes)))
		} else {
			line = append(line, "-", "-")
		}
		for _, op := range []metabench.Op{metabench.OpCreate, metabench.OpStat, metabench.OpOpen, metabench.OpRename, metabench.OpDelete} {
			if res, ok := r.Ops[op]; ok {
				line = append(line, count(uint64(res.OpsPerSec())))
			} else {
				line = append(line, "-")
			}
		}
		per := func(b uint64) string {
			if r.Inodes < 1000 { // the empty member: a ratio of nothing
				return "-"
			}
			return fmt.Sprintf("%.0f", float64(b)/float64(r.Inodes))
		}
		line = append(line, bytesText(r.RSS), per(r.RSS), bytesText(r.Disk), per(r.Disk),
			ms(r.Clean), ms(r.Killed), ms(r.Cold), secs(r.LsR), count(r.LsRLines), secs(r.Count), count(r.CountOf))
		out = append(out, line)
	}
	return benchkit.AlignRows(out, 0, 0)
}

func count(n uint64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func bytesText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func secs(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// Projection extrapolates the rows' slopes (between the two largest
// sizes) to a billion files, and says what bounds each figure.
func Projection(rows []Row) string {
	if len(rows) < 2 {
		return ""
	}
	a, b := rows[len(rows)-2], rows[len(rows)-1]
	if b.Inodes == 0 || b.Files <= a.Files {
		return ""
	}
	const billion = 1e9
	at := func(ya, yb float64) float64 {
		slope := (yb - ya) / float64(b.Files-a.Files)
		return yb + slope*(billion-float64(b.Files))
	}
	var s strings.Builder
	fmt.Fprintf(&s, "Projected to %s files from the slopes between %s and %s:\n\n", count(billion), count(a.Files), count(b.Files))
	perFile := float64(b.Disk) / float64(b.Inodes)
	fmt.Fprintf(&s, "- disk: %.0f bytes an inode, %s at a billion (%.0f GiB)\n", perFile, "linear", perFile*billion/(1<<30))
	fmt.Fprintf(&s, "- RSS: %s at a billion (%s at %s, %s at %s)\n", bytesText(uint64(math.Max(at(float64(a.RSS), float64(b.RSS)), 0))),
		bytesText(a.RSS), count(a.Files), bytesText(b.RSS), count(b.Files))
	for _, op := range []metabench.Op{metabench.OpCreate, metabench.OpStat} {
		ra, rb := a.Ops[op].OpsPerSec(), b.Ops[op].OpsPerSec()
		fmt.Fprintf(&s, "- %s/s: %.0f at a billion (%.0f, %.0f)\n", op, math.Max(at(ra, rb), 0), ra, rb)
	}
	if b.Import.Inodes > 0 {
		rate := float64(b.Import.Inodes) / b.Import.Elapsed.Seconds()
		fmt.Fprintf(&s, "- import: %.0f inodes/s: a billion in %.1f hours\n", rate, billion/rate/3600)
	}
	fmt.Fprintf(&s, "- restart after kill -9: %s at a billion (%s, %s)\n",
		ms(time.Duration(math.Max(at(float64(a.Killed), float64(b.Killed)), 0))), ms(a.Killed), ms(b.Killed))
	return s.String()
}
