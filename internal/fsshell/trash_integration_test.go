package fsshell

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/metaserver"
)

// withTrash is a service whose trash keeps what -rm deletes for an hour.
func withTrash(t *testing.T) *env {
	return newEnvWith(t, func(cfg *metaserver.Config) { cfg.TrashInterval = time.Hour })
}

// at makes the caller's clock read now.
func (c *caller) at(now time.Time) *caller {
	c.setup = func(sh *shell) { sh.now = func() time.Time { return now } }
	return c
}

// With the trash on, -rm moves paths to the user's trash, where a second
// path of the same name gets the time appended; a path in the trash, or
// -skipTrash, deletes for good; the trash's ancestors and the root are
// refused, and so is a move the user may not make (nothing is deleted).
func TestRmMovesToTheTrash(t *testing.T) {
	e := withTrash(t)
	cur := "/user/" + e.super + "/.Trash/Current"
	e.ok("-mkdir", "-p", "/d/e", "/open")
	e.ok("-chmod", "777", "/open")
	e.ok("-touchz", "/d/x", "/d/e/f", "/open/mine")
	e.expect(0, lines("Moved: 'strata://default/d/x' to trash at: strata://default"+cur+"/d/x"), "", "-rm", "/d/x")
	e.ok("-touchz", "/d/x")
	now := time.UnixMilli(1_790_000_000_123)
	e.as(e.super).at(now).expect(t, 0, lines(fmt.Sprintf("Moved: 'strata://default/d/x' to trash at: strata://default%s/d/x%d",
		cur, now.UnixMilli())), "", "-rm", "/d/x")
	e.expect(0, lines("Moved: 'strata://default/d/e' to trash at: strata://default"+cur+"/d/e"), "", "-rm", "-r", "/d/e")
	e.expect(0, lines(cur+"/d", cur+"/d/e", cur+"/d/e/f", cur+"/d/x", fmt.Sprintf("%s/d/x%d", cur, now.UnixMilli())), "",
		"-ls", "-C", "-R", cur)
	e.expect(0, lines("Deleted "+cur+"/d/e"), "", "-rm", "-r", cur+"/d/e")
	e.expect(1, "", lines(`rm: Cannot move "strata://default/user" to the trash, as it contains the trash. Consider using -skipTrash option`),
		"-rm", "-r", "/user")
	e.expect(1, "", lines("rm: Cannot delete /: the root directory is not allowed to be deleted"), "-rm", "-r", "/")
	e.ok("-touchz", "/gone")
	e.expect(0, lines("Deleted /gone"), "", "-rm", "-skipTrash", "/gone")
	e.as("alice").expect(t, 1, "", lines("rm: Failed to move to trash: strata://default/open/mine: "+
		`Permission denied: user=alice, path="/open/mine". Consider using -skipTrash option`), "-rm", "/open/mine")
	e.expect(0, lines("0  0  /open/mine"), "", "-du", "/open/mine")
}

// -expunge deletes the checkpoints older than the interval and makes
// Current a checkpoint; -immediate empties the trash.
func TestExpunge(t *testing.T) {
	e := withTrash(t)
	root := "/user/" + e.super + "/.Trash"
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	e.ok("-touchz", "/a", "/b", "/c")
	e.ok("-rm", "/a")
	e.as(e.super).at(t0).expect(t, 0, lines("Created trash checkpoint: "+root+"/261126100000"), "", "-expunge")
	e.ok("-rm", "/b")
	e.as(e.super).at(t0).expect(t, 0, lines("Created trash checkpoint: "+root+"/261126100000-1"), "", "-expunge")
	e.ok("-rm", "/c")
	later := t0.Add(61 * time.Minute)
	e.as(e.super).at(later).expect(t, 0, lines("Deleted trash checkpoint: "+root+"/261126100000",
		"Deleted trash checkpoint: "+root+"/261126100000-1", "Created trash checkpoint: "+root+"/261126110100"), "", "-expunge")
	e.expect(0, lines(root+"/261126110100", root+"/261126110100/c"), "", "-ls", "-C", "-R", root)
	e.expect(0, lines("Deleted trash checkpoint: "+root+"/261126110100"), "", "-expunge", "-immediate", "-fs", "strata://default/")
	e.expect(0, "", "", "-ls", "-C", root)
}

// With the trash off (the library's default), -rm deletes at once.
func TestRmWithoutTrash(t *testing.T) {
	e := newEnv(t)
	e.ok("-touchz", "/f")
	e.expect(0, lines("Deleted /f"), "", "-rm", "/f")
	e.expect(0, "", "", "-expunge")
}
