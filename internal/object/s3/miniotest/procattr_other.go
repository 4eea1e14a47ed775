//go:build !linux

package miniotest

import "os/exec"

// dieWithParent does nothing where the kernel offers no parent-death signal.
func dieWithParent(*exec.Cmd) {}
