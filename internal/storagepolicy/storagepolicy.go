// Package storagepolicy names the storage policies of Strata's files, as
// HDFS's block storage policies and JindoFS's: what each says of a file's
// blocks in the workers' caches and in the bucket. The namespace records a
// policy's ID on the inodes it is set on (a file or directory without one
// takes its directory's), the service signs the effective policy into the
// block access tokens it hands a file's writers and readers, and the
// workers follow it. It is a table, no more: nothing here does I/O.
package storagepolicy

import (
	"net/url"
	"strings"
)

// ID is a policy's number as the state records it; 0 is none set (the
// parent's, and at the root WARM).
type ID uint8

// The policies. Their numbers are persisted: never renumber one.
const (
	Unspecified ID = 0
	Hot         ID = 1
	Warm        ID = 2
	Cold        ID = 3
	IA          ID = 4
	AR          ID = 5
)

// Default is the policy of a file under no policy at all.
const Default = Warm

// Policy is what a policy does to a file's blocks.
type Policy struct {
	ID   ID
	Name string
	// Pin keeps the blocks in the workers' caches: a worker that writes
	// or reads one keeps it, and never evicts it to make room (up to the
	// cache's size: docs/datapath.md).
	Pin bool
	// NoCache leaves the blocks out of the worker's cache when they are
	// written: they go to the bucket only.
	NoCache bool
	// StorageClass is the bucket's storage class new blocks are written
	// in ("" for the bucket's default), which only s3:// stores have.
	StorageClass string
	// Doc says it in a few words, for listings.
	Doc string
}

var all = []Policy{
	{ID: Hot, Name: "HOT", Pin: true, Doc: "blocks pinned in the workers' caches, loaded on write, never evicted"},
	{ID: Warm, Name: "WARM", Doc: "blocks cached as they are written and read, evicted least recently used first (the default)"},
	{ID: Cold, Name: "COLD", NoCache: true, Doc: "blocks written to the bucket only, not kept in the cache"},
	{ID: IA, Name: "IA", StorageClass: "STANDARD_IA", Doc: "blocks written in the bucket's infrequent-access class (S3 STANDARD_IA)"},
	{ID: AR, Name: "AR", StorageClass: "GLACIER_IR", Doc: "blocks written in the bucket's archive class, read without a restore (S3 GLACIER_IR)"},
}

// All returns every policy, by ID.
func All() []Policy { return append([]Policy(nil), all...) }

// ByID returns the policy of id, and false for Unspecified or an unknown id.
func ByID(id ID) (Policy, bool) {
	for _, p := range all {
		if p.ID == id {
			return p, true
		}
	}
	return Policy{}, false
}

// ByName returns the policy called name, in any case (HDFS's names are
// upper case; its tools take them so).
func ByName(name string) (Policy, bool) {
	for _, p := range all {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Policy{}, false
}

// Of returns the policy of id, the default for Unspecified (or an id this
// build does not know, so that a newer service's file is still served as
// the default's).
func Of(id ID) Policy {
	if p, ok := ByID(id); ok {
		return p
	}
	p, _ := ByID(Default)
	return p
}

// StoreHasClasses reports whether the bucket uri names can hold objects in
// storage classes: s3:// stores do, a file:// directory does not.
func StoreHasClasses(uri string) bool {
	u, err := url.Parse(uri)
	return err == nil && u.Scheme == "s3"
}
