package object

import "context"

// Skipped is something a store holds that its listings leave out: no
// object (a symbolic link, a device in a local directory), or an object no
// key can name (a file name that is not UTF-8, a path longer than
// MaxKeyLen).
type Skipped struct {
	// Key is what its key would be, bytes as the store holds them (maybe
	// not UTF-8, maybe longer than MaxKeyLen): for messages, quoted.
	Key string
	// Why says why it is left out, in words: "a symbolic link".
	Why string
}

// SkipLister is an optional ability of a Store whose listings can leave
// out what it holds (localfs): ListDirSkips is ListDir, and also returns
// what it left out of the page's range of keys, so that a listing of the
// whole directory, page by page, returns each such thing once. Callers say
// so (cache mode logs them and counts them) rather than have them vanish
// without a word. Wrappers forward it from the store they wrap.
type SkipLister interface {
	ListDirSkips(ctx context.Context, prefix, token string, limit int) (entries []Entry, skipped []Skipped, next string, err error)
}

// ListDirSkips is s's ListDirSkips if it has one, else its ListDir, with
// nothing skipped: a store without the ability lists all it holds.
func ListDirSkips(ctx context.Context, s Store, prefix, token string, limit int) ([]Entry, []Skipped, string, error) {
	if sl, ok := s.(SkipLister); ok {
		return sl.ListDirSkips(ctx, prefix, token, limit)
	}
	entries, next, err := s.ListDir(ctx, prefix, token, limit)
	return entries, nil, next, err
}
