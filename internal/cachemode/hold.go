package cachemode

import (
	"context"
	"path"
	"strings"
)

// A mutation is two steps: its bucket side here, then the service's apply.
// A sync of the bucket between the two finds the bucket changed and the
// state not yet: a check of a directory being deleted finds no object and
// removes the entry, so that the delete, applied next, finds nothing and
// answers false (a listing's prefetch did that to a client's own delete);
// a check of a renamed file's source drops it before the rename moves it.
// So a mutation holds its paths from its bucket side until it is applied:
//
//   - a sync that a held path bears on is not made meanwhile: a check of
//     the path or of a path below it, a listing of the path, of a
//     directory below it or of its parent (which shows it). The state
//     answers instead, as it stood before the mutation, as if the read
//     came first. Directories further up are not held: a delete or rename
//     puts its parent's marker before it deletes anything (keepParent), so
//     that no implied prefix above it vanishes meanwhile.
//   - the syncs under way when the hold starts are waited for, so that
//     what they found lands before the bucket changes.
//
// Mutations do not hold one another off: the service orders them, and the
// second of two deletes of a path answers false as in block mode.

// hold is the paths of one mutation in namespace ns.
type hold struct {
	ns    string
	paths []string
}

// hold holds paths of c's namespace until c.release, and waits for the
// syncs they bear on that are under way. A call holds once.
func (c *call) hold(ctx context.Context, paths ...string) error {
	h := &hold{ns: c.ns.Name, paths: paths}
	var wait []*flight
	c.mu.Lock()
	c.mu.holds[h] = struct{}{}
	for k, f := range c.mu.flights {
		if h.bearsOn(k) {
			wait = append(wait, f)
		}
	}
	c.mu.Unlock()
	c.held = h
	for _, f := range wait {
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// release ends c's hold: the service applied the mutation, or will not.
func (c *call) release() {
	if c.held == nil {
		return
	}
	c.mu.Lock()
	delete(c.mu.holds, c.held)
	c.mu.Unlock()
	c.held = nil
}

// heldLocked reports whether a mutation holds a path that sync k bears
// on. c.mu is held.
func (c *call) heldLocked(k flightKey) bool {
	for h := range c.mu.holds {
		if h.bearsOn(k) {
			return true
		}
	}
	return false
}

// bearsOn reports whether sync k may find the bucket changed by h's
// mutation: k checks a held path or one below it, or lists one of those
// or a held path's parent.
func (h *hold) bearsOn(k flightKey) bool {
	if k.ns != h.ns {
		return false
	}
	for _, p := range h.paths {
		if within(k.path, p) || k.listing && k.path == path.Dir(p) {
			return true
		}
	}
	return false
}

// within reports whether the clean absolute path p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}
