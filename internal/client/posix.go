package client

// What a POSIX file system over the client (internal/fusefs) needs besides
// the Hadoop-style calls: reads at offsets from several threads that are a
// stream all the same (a kernel's read-ahead), and a writer's inode and
// length before it closes.

// ReadAtStream is ReadAt for reads that, together, go through the file in
// order, whatever thread makes each (a kernel's read-ahead issues them
// concurrently): the workers read ahead of them, as for Read, where
// ReadAt's reads have them fetch only what is asked. Safe for concurrent
// use.
func (r *Reader) ReadAtStream(p []byte, off int64) (int, error) { return r.readAt(p, off, false) }

// Inode returns the inode id of the file the writer writes.
func (w *Writer) Inode() uint64 { return w.ino }

// Size returns the file's length once what was written so far is
// committed.
func (w *Writer) Size() uint64 { return w.off }
