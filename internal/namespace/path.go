package namespace

import "strings"

// Limits on paths, as HDFS sets them by default.
const (
	MaxNameLen = 255
	MaxPathLen = 8000
	MaxDepth   = 1000
)

// SplitPath validates an absolute path and returns its components; the root
// is "/" and has none. A single trailing slash is accepted.
func SplitPath(p string) ([]string, error) {
	if len(p) == 0 || p[0] != '/' || len(p) > MaxPathLen {
		return nil, ErrInvalidPath
	}
	p = strings.TrimSuffix(p[1:], "/")
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	if len(parts) > MaxDepth {
		return nil, ErrInvalidPath
	}
	for _, c := range parts {
		if !ValidName(c) {
			return nil, ErrInvalidPath
		}
	}
	return parts, nil
}

// ValidName reports whether c may name a directory entry.
func ValidName(c string) bool {
	return c != "" && c != "." && c != ".." && len(c) <= MaxNameLen &&
		!strings.ContainsAny(c, "/\x00")
}

// JoinPath joins components into an absolute path.
func JoinPath(parts []string) string { return "/" + strings.Join(parts, "/") }
