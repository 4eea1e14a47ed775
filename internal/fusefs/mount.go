package fusefs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MountConfig says how to mount: where, and the kernel's options.
type MountConfig struct {
	Mountpoint string
	FsName     string // the source column of mount(8): strata:NAMESPACE
	MaxRead    int    // the largest read request (go-fuse's MaxWrite)
	AllowOther bool   // other users may use the mount (multi-user identities)
}

// ErrBusy is a mount point that is already mounted.
var ErrBusy = errors.New("already a mount point")

// CheckMountpoint says what is wrong with mp before a mount, if anything:
// missing, not a directory, already mounted, or no /dev/fuse. A dead FUSE
// mount there (its process gone: "transport endpoint is not connected") is
// detached first, so that a restart needs no manual umount; detached
// reports that it was.
func CheckMountpoint(mp string) (detached bool, err error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return false, fmt.Errorf("no /dev/fuse (%v): load the fuse module (modprobe fuse), or give the container the device (--device /dev/fuse)", err)
	}
	_, err = os.Stat(mp)
	if errors.Is(err, syscall.ENOTCONN) {
		if err := unmount(mp, true); err != nil {
			return false, fmt.Errorf("%s is a dead mount and could not be detached: %v", mp, err)
		}
		detached = true
		_, err = os.Stat(mp)
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return detached, fmt.Errorf("mount point %s does not exist: create it first (mkdir -p %s)", mp, mp)
	case err != nil:
		return detached, fmt.Errorf("mount point %s: %v", mp, err)
	}
	if fi, _ := os.Stat(mp); !fi.IsDir() {
		return detached, fmt.Errorf("mount point %s is not a directory", mp)
	}
	if mounted, _ := IsMounted(mp); mounted {
		return detached, fmt.Errorf("mount point %s: %w (strata umount %s first)", mp, ErrBusy, mp)
	}
	return detached, nil
}

// IsMounted reports whether mp is a mount point, by the kernel's table.
func IsMounted(mp string) (bool, error) {
	abs, err := filepath.Abs(mp)
	if err != nil {
		return false, err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMount(fields[4]) == abs {
			return true, nil
		}
	}
	return false, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Mount mounts a FUSE file system at cfg.Mountpoint and returns the
// connection's descriptor: by mount(2) as root, else by fusermount3, the
// setuid helper of Debian's fuse3 package.
func Mount(cfg MountConfig) (int, error) {
	opts := fmt.Sprintf("rootmode=40000,user_id=%d,group_id=%d,max_read=%d", os.Getuid(), os.Getgid(), cfg.MaxRead)
	if cfg.AllowOther {
		opts += ",allow_other"
	}
	if os.Geteuid() != 0 {
		return fusermount(cfg, opts)
	}
	fd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /dev/fuse: %w", err)
	}
	err = unix.Mount(cfg.FsName, cfg.Mountpoint, "fuse.strata", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("fd=%d,%s", fd, opts))
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("mount %s: %w", cfg.Mountpoint, err)
	}
	return fd, nil
}

// fusermount mounts through fusermount3, which passes the descriptor back
// over a socket (_FUSE_COMMFD).
func fusermount(cfg MountConfig, opts string) (int, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	if err != nil {
		return -1, err
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "commfd"), os.NewFile(uintptr(pair[1]), "commfd-child")
	defer ours.Close()
	cmd := exec.Command("fusermount3", "-o", opts+",fsname="+cfg.FsName+",subtype=strata", "--", cfg.Mountpoint)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Env = append(os.Environ(), "_FUSE_COMMFD=3")
	out, err := cmd.CombinedOutput()
	theirs.Close()
	if err != nil {
		return -1, fmt.Errorf("fusermount3: %v: %s", err, strings.TrimSpace(string(out)))
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(pair[0], buf, oob, 0)
	if err != nil {
		return -1, fmt.Errorf("fusermount3 passed no descriptor: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) == 0 {
		return -1, fmt.Errorf("fusermount3 passed no descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) == 0 {
		return -1, fmt.Errorf("fusermount3 passed no descriptor")
	}
	return fds[0], nil
}

// Unmount unmounts mp; lazy detaches it even while files are open there
// (their operations then fail), which a dead mount needs.
func Unmount(mp string, lazy bool) error { return unmount(mp, lazy) }

func unmount(mp string, lazy bool) error {
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = unix.MNT_DETACH
		}
		if err := unix.Unmount(mp, flags); err != nil {
			return fmt.Errorf("umount %s: %w", mp, err)
		}
		return nil
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command("fusermount3", append(args, "--", mp)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("fusermount3 -u %s: %v: %s", mp, err, strings.TrimSpace(string(out)))
	}
	return nil
}
