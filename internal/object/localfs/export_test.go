package localfs

// WalkPaths makes s resolve paths as it does where openat2 is missing: a
// component at a time, each opened with O_NOFOLLOW.
func WalkPaths(s *Store) { s.noOpenat2.Store(true) }

// KeyPath returns the file (or directory, for a marker) that key maps to.
func KeyPath(s *Store, key string) (string, error) {
	rel, err := s.rel(key)
	if err != nil {
		return "", err
	}
	return s.name(rel), nil
}

// The sizes of direct puts (direct.go), for tests that cross their edges.
const (
	DirectMin = directMin
	DirectBuf = directBuf
)
