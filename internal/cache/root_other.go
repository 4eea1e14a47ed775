//go:build !unix

package cache

import "os"

var owner = os.Geteuid

// claimRoot closes the cache's directory to others.
func claimRoot(root string) error { return os.Chmod(root, dirMode) }
