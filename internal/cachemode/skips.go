package cachemode

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
)

// What a listing leaves out. A bucket may hold keys that name no file (an
// empty, "." or ".." component, one over 255 bytes) and, in a local
// directory, entries that are no objects or that no key can name
// (symbolic links, devices, names not UTF-8, paths over 1,024 bytes:
// object.SkipLister). They are not shown; the service logs them, with how
// many there are and a few of them, once for each directory: again only
// when what the directory's listing leaves out changes, not at every
// listing of it (with sync interval 0, every access lists).

// maxSkipExamples is how many of a directory's skipped keys a log names.
const maxSkipExamples = 5

// maxSkipsLogged bounds the directories whose skipped keys the service
// remembers having logged; past it, it forgets them all and may log
// each again once.
const maxSkipsLogged = 10000

// skips is what one listing of a directory left out.
type skips struct {
	n        int
	examples []string
	sum      uint64 // of every key left out, to tell whether they changed
}

func (s *skips) add(key, why string) {
	s.n++
	if len(s.examples) < maxSkipExamples {
		s.examples = append(s.examples, fmt.Sprintf("%q (%s)", key, why))
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	s.sum += h.Sum64()
}

// addEntry notes the listing entry e under prefix unless its name can be a
// file's, and reports whether it can.
func (s *skips) addEntry(prefix string, e object.Entry) bool {
	name := strings.TrimSuffix(e.Key[len(prefix):], "/")
	if namespace.ValidBucketName(name) {
		return true
	}
	s.add(e.Key, "no file name is empty, \".\" or \"..\", or longer than 255 bytes")
	return false
}

// reportSkips logs what the listing of directory path left out, unless that
// was logged already.
func (c *call) reportSkips(path string, s *skips) {
	key := c.ns.Name + "\x00" + path
	c.mu.Lock()
	last, logged := c.mu.skipsLogged[key]
	if s.n > 0 && len(c.mu.skipsLogged) >= maxSkipsLogged {
		clear(c.mu.skipsLogged)
	}
	if s.n > 0 {
		c.mu.skipsLogged[key] = s.sum
	} else {
		delete(c.mu.skipsLogged, key)
	}
	c.mu.Unlock()
	if s.n == 0 || (logged && last == s.sum) {
		return
	}
	c.log.Warn("cache mode: bucket entries that cannot be files are not shown", "namespace", c.ns.Name,
		"path", path, "entries", s.n, "examples", strings.Join(s.examples, ", "))
}
