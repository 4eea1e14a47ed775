//go:build !unix

package metabench

import "time"

// processCPU is unknown here.
func processCPU() time.Duration { return 0 }
