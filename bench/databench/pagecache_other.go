//go:build !(linux && (amd64 || arm64))

package databench

import "errors"

const canDropPageCache = false

var errNoPageCacheControl = errors.New("databench: page cache control needs Linux on amd64 or arm64")

func dropPageCache(string) error { return errNoPageCacheControl }

func residentBytes(string) (int64, int64, error) { return 0, 0, errNoPageCacheControl }
