package cputime_test

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/cputime"
)

// Of reads this very process's CPU time as Process does, within /proc's
// hundredth of a second.
func TestOfAgreesWithProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); { // spend some CPU
	}
	of, own := cputime.Of(os.Getpid()), cputime.Process()
	if of <= 0 || of > own+20*time.Millisecond || of < own-20*time.Millisecond {
		t.Fatalf("Of(self) = %v, Process() = %v", of, own)
	}
	if got := cputime.Of(-1); got != 0 {
		t.Fatalf("Of(-1) = %v, want 0", got)
	}
}
