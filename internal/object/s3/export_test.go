package s3

// SetCopyLimits lowers the size above which Copy goes part by part, and the
// parts' size, so that tests can copy small objects that way.
func SetCopyLimits(s *Store, limit, partSize int64) {
	s.copyLimit, s.copyPartSize = limit, partSize
}
