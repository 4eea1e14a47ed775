package fsshell

import "testing"

func TestChmodChownChgrp(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "-p", "/p/d")
	e.ok("-touchz", "/p/f", "/p/d/g")
	e.expect(0, "", "", "-chmod", "-R", "go-rx", "/p")
	e.expect(0, lines("700 p", "700 d", "600 g", "600 f"), "", "-stat", "-R", "%a %n", "/p")
	e.expect(0, "", "", "-chmod", "a+X,u-w", "/p/d", "/p/f")
	e.expect(0, lines("511 r-x--x--x", "400 r--------"), "", "-stat", "%a %A", "/p/d", "/p/f")
	e.expect(0, "", "", "-chmod", "1777", "/p/d")
	e.expect(0, lines("1777 rwxrwxrwt"), "", "-stat", "%a %A", "/p/d")
	e.expect(0, "", "", "-chmod", "-w", "/p/d")
	e.expect(0, lines("1555 r-xr-xr-t"), "", "-stat", "%a %A", "/p/d")
	e.expect(1, "", lines("chmod: `/nope': No such file or directory"), "-chmod", "755", "/nope")

	e.expect(0, "", "", "-chown", "-R", "alice:hadoop", "/p")
	e.expect(0, lines("alice:hadoop", "alice:hadoop", "alice:hadoop", "alice:hadoop"), "", "-stat", "-R", "%u:%g", "/p")
	e.expect(0, "", "", "-chown", "bob", "/p/f")
	e.expect(0, "", "", "-chgrp", "staff", "/p/f")
	e.expect(0, "", "", "-chown", ":eng", "/p/d")
	e.expect(0, lines("bob:staff", "alice:eng"), "", "-stat", "%u:%g", "/p/f", "/p/d")
}

// A user who is not a superuser meets the service's permission checks,
// reported in Hadoop's words, with exit status 1.
func TestPermissionDenied(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "-p", "/a/priv", "/user/bob")
	e.ok("-touchz", "/a/f", "/a/secret")
	e.ok("-chown", "-R", "alice:hadoop", "/a")
	e.ok("-chown", "bob:bob", "/user/bob")
	e.ok("-chmod", "700", "/a/priv")
	e.ok("-chmod", "600", "/a/secret")
	bob := e.as("bob")
	bob.expect(t, 1, "", lines(`mkdir: Permission denied: user=bob, path="/a/x"`), "-mkdir", "/a/x")
	bob.expect(t, 1, "", lines(`rm: Permission denied: user=bob, path="/a/f"`), "-rm", "/a/f")
	// A path it may not even look up is denied once, not also "not found".
	bob.expect(t, 1, "", lines(`rm: Permission denied: user=bob, path="/a/priv/x"`), "-rm", "/a/priv/x")
	bob.expect(t, 1, "", lines(`rm: Permission denied: user=bob, path="/a/priv/x"`), "-rm", "-f", "/a/priv/x")
	bob.expect(t, 1, "", lines(`touchz: Permission denied: user=bob, path="/a/new"`), "-touchz", "/a/new")
	bob.expect(t, 1, "", lines(`ls: Permission denied: user=bob, path="/a/priv"`), "-ls", "/a/priv")
	bob.expect(t, 1, "", lines(`cat: Permission denied: user=bob, path="/a/secret"`), "-cat", "/a/secret")
	bob.expect(t, 1, "", lines(`mv: Permission denied: user=bob, path="/a/f"`), "-mv", "/a/f", "/a/g")
	bob.expect(t, 1, "", lines("chmod: changing permissions of '/a/f': Permission denied. user=bob is not the owner of inode=/a/f"), "-chmod", "777", "/a/f")
	bob.expect(t, 1, "", lines("chown: changing ownership of '/a/f': Permission denied. user=bob is not the owner of inode=/a/f"), "-chown", "bob", "/a/f")
	bob.expect(t, 1, "", "", "-test", "-w", "/a/f")
	bob.expect(t, 0, "", "", "-test", "-r", "/a/f")
	bob.expect(t, 1, "", "", "-test", "-r", "/a/secret")
	e.as("carol", "hadoop").expect(t, 1, "", "", "-test", "-w", "/a/f")
	e.as("alice").expect(t, 0, "", "", "-test", "-w", "/a/f")
	// Listing a directory it may not read fails; what it may list still prints.
	bob.expect(t, 1, lines("drwxr-xr-x   - bob bob          0 DATE /user/bob"),
		lines(`ls: Permission denied: user=bob, path="/a/priv"`), "-ls", "-R", "/a/priv", "/user")
	// In its home directory, relative paths work for bob.
	bob.expect(t, 0, "", "", "-mkdir", "mine")
	bob.expect(t, 0, lines("drwxr-xr-x   - bob bob          0 DATE mine"), "", "-ls", "-d", "mine")
	// The owner may give a file to a group it belongs to only, and only a
	// superuser may give it to another user: each refusal says which.
	bob.expect(t, 0, "", "", "-touchz", "/user/bob/f")
	bob.expect(t, 1, "", lines("chgrp: changing ownership of '/user/bob/f': User bob does not belong to hadoop"),
		"-chgrp", "hadoop", "/user/bob/f")
	bob.expect(t, 1, "", lines("chown: changing ownership of '/user/bob/f': User bob is not a super user (non-super user cannot change owner)."),
		"-chown", "alice", "/user/bob/f")
	e.as("bob", "staff").expect(t, 0, "", "", "-chgrp", "staff", "/user/bob/f")
}
