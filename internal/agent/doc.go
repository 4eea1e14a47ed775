// Package agent serves the Go client (internal/client) to other processes
// of the same user on this host, over a Unix socket: it is how the Python
// package (python/, docs/python.md) reaches Strata. It is not a second
// client: every call it serves is the Go client's, with its failover,
// retries under request ids, batching, worker choice and short-circuit
// reads and writes; the agent only names files by handles and moves bytes
// through memory it shares with the caller.
//
// Why a process and not a library loaded into Python (a c-shared build):
// a Go runtime does not survive fork (only the forking thread exists in the
// child, and the runtime's others held its locks), and data loaders fork
// after the parent opened files. The agent is a process of its own, so a
// forked child simply connects to it again (docs/python.md has the
// measurements behind the choice).
//
// # Lifetime
//
// `strata agent --socket PATH` listens on PATH (its directory must be the
// caller's alone), prints "ready" on its standard output, and exits when its
// standard input reaches end of file: the pipe's write end is held by the
// process that started it and by every child that process forks, so the
// agent lives exactly as long as the process tree it serves. A connection is
// accepted only from a process of the agent's own user (SO_PEERCRED).
//
// # Wire format
//
// Every message in either direction is a frame: a 4-byte big-endian length,
// then that many bytes of JSON (an object). A request is at most
// MaxRequest bytes; the agent answers each request of a connection in
// order, so a caller may send several before reading the answers
// (pipelining). A connection's first request must be
//
//	{"op": "hello", "version": 1}
//
// sent with one descriptor (SCM_RIGHTS): a memfd sealed against shrinking
// and growing (F_SEAL_SHRINK|F_SEAL_GROW), of at most MaxShared bytes,
// which both sides map, within HelloWithin of connecting (else the agent
// closes the connection). Data moves only through it: a read names where in
// it the bytes go ("shm": the offset, "len": how many), a write where they
// are. The seals are what make this safe for the agent: a region that
// could shrink under its mapping would fault.
//
// An answer is {"ok": true, ...fields} or
//
//	{"ok": false, "cond": "not_found", "msg": "..."}
//
// where cond names the failure's condition (errors.go: one per
// internal/fserr sentinel, "unavailable" for a service or worker that could
// not be reached, "io" for anything else). The operations, their fields and
// their answers are the ops table in ops.go; testdata/frames.txt holds a
// conversation byte for byte, which both the Go and the Python tests read.
// Reads run concurrently with the reads around them (a sequential reader
// asks for its next chunks ahead); every other request waits for the reads
// before it; answers always come in request order.
//
// # Leases handed on
//
// "lend" answers the worker's short-circuit leases of a file's blocks (the
// Go client's Reader.Lend), each as its range and CRCs, their descriptors in
// the same message (SCM_RIGHTS), in order: the caller reads the cache files
// itself, doing what client.Lent's doc comment asks of a holder. It is how
// the Python package reads cached data at the Go client's cost.
//
// # Files
//
// open and create answer a handle, a number the agent's table maps to a
// reader or a writer. Handles belong to the process that opened them (its
// pid, from SO_PEERCRED): any of its connections may use them, and when its
// last connection closes (it exited, or closed them all) the agent closes
// its readers and aborts its writers (a new file never flushed is removed,
// as a failed write's is). A forked child therefore opens files again
// rather than use its parent's handles. Handles start at a random number,
// so that a caller's handle from an agent that was killed names no file of
// the one started after it.
package agent
