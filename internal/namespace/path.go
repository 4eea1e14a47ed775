package namespace

import (
	"strings"

	"github.com/stratafs/strata/internal/fspath"
)

// Limits on paths: internal/fspath's, as HDFS sets them by default.
const (
	MaxNameLen = fspath.MaxNameLen
	MaxPathLen = fspath.MaxPathLen
	MaxDepth   = fspath.MaxDepth
)

// SplitPath validates an absolute path and returns its components; the root
// is "/" and has none. A single trailing slash is accepted. The rule is
// internal/fspath's Split; the names a call creates are checked further
// before it is proposed (internal/metaserver), not here, so that commands
// already in the log apply as they did.
func SplitPath(p string) ([]string, error) { return fspath.Split(p) }

// ValidName reports whether c passes SplitPath as a component.
func ValidName(c string) bool {
	if c == "" || strings.Contains(c, "/") {
		return false
	}
	_, err := fspath.Split("/" + c)
	return err == nil
}

// JoinPath joins components into an absolute path.
func JoinPath(parts []string) string { return "/" + strings.Join(parts, "/") }
