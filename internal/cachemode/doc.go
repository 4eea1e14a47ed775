// Package cachemode is the bucket side of cache-mode namespaces: a namespace
// that is a view of an existing bucket, every object a file at its key,
// every common prefix (or S3A directory marker) a directory, and every other
// S3 client still reading and writing the same objects.
//
// The namespace service's leader calls Prepare before it serves an operation
// on such a namespace. For a read, Prepare makes what the state holds of the
// paths involved fresh enough for the namespace's sync policy, asking the
// bucket (HeadObject, ListObjectsV2 with a delimiter) and logging what it
// found (the state machine's SyncPath and SyncListing commands). For a
// mutation, it first does the mutation's part in the bucket, as S3A does:
// mkdir puts a directory marker, delete deletes the objects, rename copies
// then deletes them (per object, not atomically), a small file's content is
// put as its object, and a writer's finished object is looked up for its
// version. The service then logs the mutation as in block mode; until it
// is applied, the mutation holds its paths against syncs (hold.go).
//
// The sync policy is the namespace's sync interval, in seconds: -1 trusts
// what was loaded for ever (a bucket only Strata writes), 0 asks the bucket
// on every access, N trusts it for N seconds. Resync (strata admin sync)
// makes a subtree stale at once.
//
// It is not the data path: workers read and write the objects (a file is
// read as blocks that are ranges of its object, of one version), and it
// keeps no state of its own beyond the requests in flight: everything it
// learns goes through the log.
package cachemode
