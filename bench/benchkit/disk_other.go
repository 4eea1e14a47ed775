//go:build !unix

package benchkit

// DiskFree returns 0, 0: the free space is unknown here.
func DiskFree(string) (uint64, int64) { return 0, 0 }
