package cache

import (
	"slices"
)

// Keys returns the keys of the cached blocks, sorted.
func (c *Cache) Keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.mu.blocks))
	for k := range c.mu.blocks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
