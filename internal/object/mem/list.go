package mem

import (
	"context"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/object"
)

// List implements object.Store. It sorts all keys on every call, which is
// fine for tests and nothing else.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, object.WrapError(object.OpList, prefix, err)
	}
	var out []object.Info
	for _, in := range s.sorted(prefix) {
		if in.Key > startAfter {
			out = append(out, in)
		}
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// sorted returns the Info of every object under prefix, in key order.
func (s *Store) sorted(prefix string) []object.Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []object.Info
	for k, e := range s.mu.objects {
		if strings.HasPrefix(k, prefix) {
			out = append(out, e.info(k))
		}
	}
	slices.SortFunc(out, func(a, b object.Info) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// ListDir implements object.Store. The token is the last entry's key: a
// prefix token skips every key under it.
func (s *Store) ListDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", object.WrapError(object.OpListDir, prefix, err)
	}
	if limit <= 0 {
		limit = object.DefaultListDirLimit
	}
	var out []object.Entry
	for _, in := range s.sorted(prefix) {
		if in.Key == prefix || !object.AfterEntry(in.Key, token) {
			continue
		}
		e := object.Entry{Info: in}
		if i := strings.IndexByte(in.Key[len(prefix):], '/'); i >= 0 {
			e = object.Entry{Info: object.Info{Key: in.Key[:len(prefix)+i+1]}, Prefix: true}
		}
		if n := len(out); n > 0 && out[n-1].Key == e.Key {
			continue // one more key under the same common prefix
		}
		if len(out) == limit {
			return out, out[len(out)-1].Key, nil
		}
		out = append(out, e)
	}
	return out, "", nil
}
