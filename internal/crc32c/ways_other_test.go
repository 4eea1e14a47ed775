//go:build !amd64

package crc32c

// way is one way Copy can go; use switches Copy to it and returns what
// switches it back.
type way struct {
	name string
	use  func() (restore func())
}

// ways: elsewhere Copy has one way, copy then hash/crc32.
func ways() []way { return []way{{"generic", func() func() { return func() {} }}} }
