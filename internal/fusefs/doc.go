// Package fusefs is the FUSE file system of `strata mount`: it answers the
// kernel's requests (go-fuse's raw protocol, fuse.RawFileSystem) with calls
// of the Go client (internal/client), so that a mounted namespace reads and
// writes through the workers' caches and short-circuit paths as any client
// does. It holds no metadata semantics of its own: every name, permission
// and rename is the namespace service's.
//
// What it adds is what a kernel needs and a Hadoop-style client does not
// give (docs/fuse.md says each choice):
//
//   - nodes: the kernel names files by node id; the table (nodes.go) maps
//     each id to its parent and name, and a journal beside the mount keeps it
//     across a restart of the serving process (journal.go), so that the
//     kernel's ids still mean something to its successor;
//   - handles: an open file is a reader, a sequential writer streaming to
//     the workers, or a staged rewrite (random writes, truncates) kept on
//     local disk and committed whole, atomically, at close (stage.go);
//   - callers: each request is made as the calling user (identity.go);
//   - errno: fserr conditions become the errno a POSIX program expects, in
//     one place (errno.go);
//   - takeover: a successor process serves the same /dev/fuse connection
//     (takeover.go), and requests left unanswered by its predecessor are
//     sent again by the kernel.
//
// It is not the mount command: cmd/strata/mount.go mounts, supervises and
// restarts the serving process.
package fusefs
