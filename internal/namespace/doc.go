// Package namespace implements the file system namespace: directories, files,
// their attributes, leases and per-directory aggregates, as operations over a
// kv transaction: the file system's rules, which the state machine
// (internal/statemachine) applies as the log's commands and reads for the
// service. It is not the state machine: it knows nothing of commands,
// requests, retries or the log, and nothing but the state machine (and
// cache mode, for a cache-mode namespace's entries) calls it; a test
// checks the imports.
//
// It does no I/O and reads no clock: every operation takes the time and the
// caller as arguments, so that applying the same commands to the same state
// gives the same result on every replica. A failed operation returns an
// error and must not have written anything the caller keeps (the apply path
// discards its overlay).
//
// Semantics follow HDFS wherever HDFS defines them; docs/semantics.md lists
// the few deliberate differences.
package namespace
