//go:build !unix

package benchkit

func diskFree(string) (uint64, int64) { return 0, 0 }
