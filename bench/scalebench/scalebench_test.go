package scalebench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/bench/metabench"
	"github.com/stratafs/strata/internal/fsimage"
)

// TestTreeHoldsWhatWasAsked: a tree holds at least the files asked for,
// its samples among them, the same tree on every pass, every entry's
// parent a directory.
func TestTreeHoldsWhatWasAsked(t *testing.T) {
	tree := NewTree(Tree{Files: 50_000, Seed: 3, BigTable: 1540, BigDB: 3600})
	var files, dirs uint64
	isDir := map[uint64]bool{}
	err := tree.Entries(func(e *fsimage.Entry) error {
		if e.Type == fsimage.Dir {
			dirs++
			isDir[e.ID] = true
		} else {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50_000 || files > 50_000+200_000 {
		t.Fatalf("%d files for 50,000 asked", files)
	}
	if files+dirs != tree.Count() {
		t.Fatalf("%d entries, Count says %d", files+dirs, tree.Count())
	}
	err = tree.Children(func(parent uint64, kids []uint64) error {
		if !isDir[parent] {
			t.Fatalf("parent %d is not a directory", parent)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	again := NewTree(Tree{Files: 50_000, Seed: 3, BigTable: 1540, BigDB: 3600})
	if again.Count() != tree.Count() {
		t.Fatalf("a second walk made %d entries, the first %d", again.Count(), tree.Count())
	}
}

// TestProjectionFitsEveryRow: the projection follows a line through all
// the rows, so one noisy row does not send it anywhere.
func TestProjectionFitsEveryRow(t *testing.T) {
	if got := project([]Row{{Files: 10}, {Files: 20}, {Files: 30}}, func(r Row) float64 { return 2*float64(r.Files) + 1 }, 100, linear); math.Abs(got-201) > 1e-9 {
		t.Fatalf("the line through y = 2x + 1 gives %v at 100", got)
	}
	byLog := func(r Row) float64 { return 3*math.Log(float64(r.Files)) + 1 }
	if got, want := project([]Row{{Files: 10}, {Files: 1000}}, byLog, 1e9, math.Log), 3*math.Log(1e9)+1; math.Abs(got-want) > 1e-9 {
		t.Fatalf("the line through y = 3 ln x + 1 gives %v at a billion, want %v", got, want)
	}
	row := func(files uint64, stat float64) Row {
		return Row{Files: files, Inodes: files, RSS: 1 << 30, Disk: 50 * files, Killed: 200 * time.Millisecond,
			Ops: map[metabench.Op]metabench.Result{metabench.OpStat: {Op: metabench.OpStat, Ops: int64(stat), Elapsed: time.Second}}}
	}
	text := Projection([]Row{{}, row(10e6, 30000), row(20e6, 20000), row(30e6, 31000)})
	if !strings.Contains(text, "measured 20,000 to 31,000") || !strings.Contains(text, "47 GiB") {
		t.Fatalf("projection:\n%s", text)
	}
}
