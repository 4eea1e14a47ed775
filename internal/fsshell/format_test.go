package fsshell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
)

func TestPermString(t *testing.T) {
	for perm, want := range map[uint32]string{
		0o755: "rwxr-xr-x", 0o644: "rw-r--r--", 0o000: "---------", 0o777: "rwxrwxrwx",
		0o1777: "rwxrwxrwt", 0o1776: "rwxrwxrwT", 0o4755: "rwxr-xr-x",
	} {
		if got := permString(perm); got != want {
			t.Errorf("permString(%o) = %q, want %q", perm, got, want)
		}
	}
}

func TestPermOctal(t *testing.T) {
	for perm, want := range map[uint32]string{0o755: "755", 0o1777: "1777", 0o7: "7", 0o0: "0", 0o640: "640"} {
		if got := permOctal(perm); got != want {
			t.Errorf("permOctal(%o) = %q, want %q", perm, got, want)
		}
	}
}

// Expected values are what Hadoop's TraditionalBinaryPrefix.long2String(n,
// "", 1) returns.
func TestHumanSize(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		want string
	}{
		{0, "0"}, {1023, "1023"}, {1024, "1 K"}, {1536, "1.5 K"}, {1280, "1.3 K"},
		{1100, "1.1 K"}, {10 << 10, "10 K"}, {1048575, "1.0 M"}, {67108864, "64 M"},
		{3 << 30, "3 G"}, {(3 << 30) + (1 << 29), "3.5 G"}, {1 << 40, "1 T"}, {1 << 50, "1 P"},
		{1 << 60, "1 E"}, {^uint64(0), "16.0 E"},
	} {
		if got := humanSize(c.n); got != c.want {
			t.Errorf("humanSize(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "tab\there": "tab?here", "bell\a": "bell?", "naïve é": "naïve é",
		"zw\u200bsp": "zw?sp", "bad\xffutf": "bad?utf", "priv\ue000": "priv?",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

var (
	t0    = time.Date(2024, 1, 2, 15, 4, 5, 0, time.UTC)
	fileA = &client.FileStatus{Path: "/a/f", Name: "f", Length: 1234, Perm: 0o644, Owner: "alice",
		Group: "supergroup", ModTime: t0, AccTime: t0.Add(time.Hour), Replication: 3, BlockSize: 128 << 20}
	dirB = &client.FileStatus{Path: "/a/b", Name: "b", IsDir: true, Perm: 0o755, Owner: "alice",
		Group: "supergroup", ModTime: t0, AccTime: t0}
)

func TestLsLines(t *testing.T) {
	f := newLsFormat(time.UTC)
	items := []*pathData{{text: "/a/b", st: dirB}, {text: "/a/f", st: fileA}}
	f.adjust(items)
	got := f.line("/a/b", dirB) + "\n" + f.line("/a/f", fileA) + "\n"
	want := "" +
		"drwxr-xr-x   - alice supergroup          0 2024-01-02 15:04 /a/b\n" +
		"-rw-r--r--   3 alice supergroup       1234 2024-01-02 15:04 /a/f\n"
	if got != want {
		t.Fatalf("got\n%swant\n%s", got, want)
	}
	// Widths only grow: a later group with a longer owner and size widens
	// the columns for what follows, as Hadoop's Ls does.
	big := *fileA
	big.Owner, big.Length, big.Replication = "maximilian", 123456789012, 1
	f.adjust([]*pathData{{st: &big}})
	if got, want := f.line("/a/f", fileA), "-rw-r--r--   3 alice      supergroup         1234 2024-01-02 15:04 /a/f"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestLsLineOptions(t *testing.T) {
	f := newLsFormat(time.FixedZone("X", 2*3600))
	f.human, f.atime = true, true
	f.adjust([]*pathData{{st: fileA}})
	got := f.line("/a/f\x01", fileA)
	want := "-rw-r--r--   3 alice supergroup      1.2 K 2024-01-02 18:04 /a/f?"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	sticky := *dirB
	sticky.Perm, sticky.Owner, sticky.Group = 0o1777, "", ""
	f = newLsFormat(time.UTC)
	f.adjust([]*pathData{{st: &sticky}})
	if got, want := f.line("/tmp", &sticky), "drwxrwxrwt   -          0 2024-01-02 15:04 /tmp"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// Names that may not be created any more can still come from elsewhere
// (an older service, a bucket's keys in cache mode): -ls prints each entry
// on one line, -q or not, with -C too.
func TestLsPrintsEachEntryOnOneLine(t *testing.T) {
	nl, ctl := *fileA, *fileA
	nl.Name, ctl.Name = "nl\nx", "a\x01b"
	for _, c := range []struct {
		pathOnly bool
		want     string
	}{
		{false, "Found 2 items\n" +
			"-rw-r--r--   3 alice supergroup       1234 2024-01-02 15:04 /q/a?b\n" +
			"-rw-r--r--   3 alice supergroup       1234 2024-01-02 15:04 /q/nl?x\n"},
		{true, "/q/a?b\n/q/nl?x\n"},
	} {
		var out bytes.Buffer
		sh := newShell(context.Background(), &out, io.Discard, nil)
		ls := &lsCmd{sh: sh, f: newLsFormat(time.UTC), pathOnly: c.pathOnly, dirRecurse: true}
		dir := &pathData{text: "/q", abs: "/q", st: dirB}
		ls.paths(dir, []*pathData{dir.child(&ctl), dir.child(&nl)})
		sh.close()
		if out.String() != c.want {
			t.Errorf("-C %v: got\n%q\nwant\n%q", c.pathOnly, out.String(), c.want)
		}
	}
}

func TestTable(t *testing.T) {
	tb := newTable(3)
	if tb.String() != "" {
		t.Fatal("an empty table prints something")
	}
	tb.add("0", "0", "/user/a")
	tb.add("1234", "3702", "/user/b")
	want := "0     0     /user/a\n1234  3702  /user/b\n"
	if got := tb.String(); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	tb = newTable(3, "SIZE", "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS", "FULL_PATH_NAME")
	if tb.String() != "" {
		t.Fatal("a table with only its header prints something")
	}
	tb.add("12", "36", "/x")
	want = "SIZE  DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME\n12    36                                     /x\n"
	if got := tb.String(); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}

func TestCountLines(t *testing.T) {
	sum := &client.ContentSummary{Length: 1536, FileCount: 3, DirectoryCount: 2, SpaceConsumed: 4608}
	quota := *sum
	quota.Quota = &client.Quota{Names: 4, Space: 4096}
	for _, c := range []struct {
		sum           *client.ContentSummary
		quotas, human bool
		want          string
	}{
		{sum, false, false, "           2            3               1536 "},
		{sum, false, true, "           2            3              1.5 K "},
		{sum, true, false, "        none             inf            none             inf            2            3               1536 "},
		{&quota, true, false, "           4              -1            4096            -512            2            3               1536 "},
	} {
		if got := countLine(c.sum, c.quotas, c.human); got != c.want {
			t.Errorf("countLine(q=%v, h=%v) = %q, want %q", c.quotas, c.human, got, c.want)
		}
	}
	if countHeader != "   DIR_COUNT   FILE_COUNT       CONTENT_SIZE " {
		t.Errorf("count header %q", countHeader)
	}
	if quotaHeader != "       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA " {
		t.Errorf("quota header %q", quotaHeader)
	}
}

func TestFormatStat(t *testing.T) {
	for _, c := range []struct {
		format, name string
		st           *client.FileStatus
		want         string
	}{
		{"%y", "f", fileA, "2024-01-02 15:04:05"},
		{"%a %A %b %F %g %n %o %r %u", "f", fileA, "644 rw-r--r-- 1234 regular file supergroup f 134217728 3 alice"},
		{"%x|%X|%Y", "f", fileA, "2024-01-02 16:04:05|1704211445000|1704207845000"},
		{"%F %r %o %b", "b", dirB, "directory 0 0 0"},
		{"100%% %q and %", "f", fileA, "100% q and "},
		{"type:%F perm:%a", "", dirB, "type:directory perm:755"},
	} {
		if got := formatStat(c.format, c.name, c.st); got != c.want {
			t.Errorf("formatStat(%q) = %q, want %q", c.format, got, c.want)
		}
	}
}

func TestHelpTextsFitEightyColumns(t *testing.T) {
	for _, c := range sortedCommands() {
		for _, line := range strings.Split(c.desc, "\n") {
			if len(line)+2 > 82 {
				t.Errorf("-%s help line too long: %q", c.name, line)
			}
		}
	}
}

// TestLsLineAsFmt checks the appending formatter against the fmt layout
// it replaced, over unicode and unprintable names, every mode bit, the
// years Format pads and the widths that grow.
func TestLsLineAsFmt(t *testing.T) {
	old := func(f *lsFormat, text string, st *client.FileStatus) string {
		typ, repl := "-", fmt.Sprint(st.Replication)
		if st.IsDir {
			typ, repl = "d", "-"
		}
		pad := func(s string, w int) string {
			if w == 0 {
				return s
			}
			return fmt.Sprintf("%-*s ", w, s)
		}
		acl := " "
		if st.HasACL {
			acl = "+"
		}
		return fmt.Sprintf("%s%s%s%*s %s%s%*d %s %s", typ, permString(st.Perm), acl, f.maxRepl, repl, pad(st.Owner, f.maxOwner),
			pad(st.Group, f.maxGroup), f.maxLen, st.Length, st.ModTime.In(f.loc).Format("2006-01-02 15:04"), printable(text))
	}
	f := newLsFormat(time.FixedZone("odd", -(3*3600 + 17*60 + 30)))
	for i, name := range []string{"/a/f", "/ünï/çødé", "/tab\there", "/del\x7f", "/bad\xff", "/日本語/ファイル"} {
		st := *fileA
		st.Perm, st.IsDir, st.HasACL = uint32(i*0o1237)&0o1777, i%2 == 1, i%3 == 1
		st.Owner = strings.Repeat("o", i)
		st.Length = uint64(i) * 987654321
		st.ModTime = time.Date(1+i*1999, time.Month(1+i), 28, i, 59, 59, 0, time.UTC)
		if st.IsDir {
			st.Replication = 0
		}
		f.adjust([]*pathData{{st: &st}})
		if got, want := f.line(name, &st), old(f, name, &st); got != want {
			t.Errorf("%q:\ngot  %q\nwant %q", name, got, want)
		}
	}
}
