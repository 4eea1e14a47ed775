//go:build !unix

package bulkload

import (
	"io"
	"os"
)

// mapFile reads the first size bytes of f, where no mapping is to be had.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	data := make([]byte, size)
	_, err := io.ReadFull(io.NewSectionReader(f, 0, size), data)
	return data, nil, err
}
