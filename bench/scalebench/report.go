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
		"create cpu µs", "stat cpu µs", "RSS", "RSS B/file", "disk", "disk B/file", "restart", "kill -9", "cold", "ls -R", "lines", "count", "of"}
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
		for _, op := range []metabench.Op{metabench.OpCreate, metabench.OpStat} {
			line = append(line, cpuPerOp(r, op))
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

// Projection extrapolates the rows to a billion files along a least-squares
// line through every row of a namespace that is not empty (two points of
// noisy rates made lines that went anywhere), each next to what was
// measured, and says what bounds each figure. Sizes grow with the files;
// rates and times, which a sorted store's lookups make grow with the levels
// of its tree, along the logarithm of the files (a straight line through
// noisy rates crossed zero before a billion).
func Projection(rows []Row) string {
	var fit []Row
	for _, r := range rows {
		if r.Files > 0 && r.Inodes > 0 {
			fit = append(fit, r)
		}
	}
	if len(fit) < 2 {
		return ""
	}
	const billion = 1e9
	at := func(y func(Row) float64) float64 { return math.Max(project(fit, y, billion, linear), 0) }
	atLog := func(y func(Row) float64) float64 { return math.Max(project(fit, y, billion, math.Log), 0) }
	span := func(y func(Row) float64, f func(float64) string) string {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range fit {
			lo, hi = math.Min(lo, y(r)), math.Max(hi, y(r))
		}
		return fmt.Sprintf("measured %s to %s", f(lo), f(hi))
	}
	num := func(v float64) string { return count(uint64(v)) }
	byt := func(v float64) string { return bytesText(uint64(v)) }
	last := fit[len(fit)-1]
	var s strings.Builder
	fmt.Fprintf(&s, "Projected to %s files along a least-squares line through the rows from %s to %s:\n\n",
		count(billion), count(fit[0].Files), count(last.Files))
	perFile := float64(last.Disk) / float64(last.Inodes)
	fmt.Fprintf(&s, "- disk: %.0f bytes an inode at %s: %.0f GiB at a billion (disk is the first bound)\n",
		perFile, count(last.Files), perFile*billion/(1<<30))
	rssOf := func(r Row) float64 { return float64(r.RSS) }
	fmt.Fprintf(&s, "- RSS: %s at a billion (%s; bounded by --memory-limit and --block-cache, not by the namespace)\n",
		byt(at(rssOf)), span(rssOf, byt))
	for _, op := range []metabench.Op{metabench.OpCreate, metabench.OpStat} {
		y := func(r Row) float64 { return r.Ops[op].OpsPerSec() }
		fmt.Fprintf(&s, "- %s/s: %s at a billion (%s; along the files' logarithm)\n", op, num(atLog(y)), span(y, num))
	}
	imp := func(r Row) float64 { return float64(r.Import.Inodes) / r.Import.Elapsed.Seconds() }
	if rate := imp(last); last.Import.Inodes > 0 {
		fmt.Fprintf(&s, "- import: a billion inodes in %.1f hours at the last import's %s inodes/s (%s)\n",
			billion/rate/3600, num(rate), span(imp, num))
	}
	killed := func(r Row) float64 { return float64(r.Killed) }
	fmt.Fprintf(&s, "- restart after kill -9: %s at a billion (%s; along the files' logarithm)\n", ms(time.Duration(atLog(killed))),
		span(killed, func(v float64) string { return ms(time.Duration(v)) }))
	return s.String()
}

func linear(x float64) float64 { return x }

// project is the least-squares line through the rows' (scale(files), y)
// at scale(x).
func project(rows []Row, y func(Row) float64, x float64, scale func(float64) float64) float64 {
	x = scale(x)
	var n, sx, sy, sxx, sxy float64
	for _, r := range rows {
		fx, fy := scale(float64(r.Files)), y(r)
		n, sx, sy, sxx, sxy = n+1, sx+fx, sy+fy, sxx+fx*fx, sxy+fx*fy
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return sy / n
	}
	slope := (n*sxy - sx*sy) / d
	return (sy-slope*sx)/n + slope*x
}

// cpuPerOp is the member's CPU time an operation of op's phase, in µs.
func cpuPerOp(r Row, op metabench.Op) string {
	res, ok := r.Ops[op]
	if !ok || res.Ops == 0 || r.OpCPU[op] == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(r.OpCPU[op].Microseconds())/float64(res.Ops))
}
