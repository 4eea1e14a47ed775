package miniotest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill MinIO if the test binary dies without
// running its cleanups (a panic, a -timeout, kill -9), so no server outlives
// its test.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
