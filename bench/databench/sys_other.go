//go:build !unix

package databench

import "time"

func processCPU() time.Duration { return 0 }

func diskFree(string) (uint64, int64) { return 0, 0 }
