//go:build !linux

package localfs

import (
	"errors"
	"os"
)

// Outside Linux a direct put writes through the page cache: fillDirect's
// ordinary writes.

var errDirectRefused = errors.ErrUnsupported

func setDirect(*os.File, bool) error { return errors.ErrUnsupported }
