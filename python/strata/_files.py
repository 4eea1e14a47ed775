"""Open files: StrataReader (rb) and StrataWriter (wb, xb, ab).

Both hold a handle in the agent and move bytes through a connection's
shared memory, one copy on this side. A file belongs to the process that
opened it: a forked child's reader opens the file again on first use (the
same inode, or it fails), and a writer refuses to be used there.
"""

from __future__ import annotations

import errno
import io
import os
from typing import TYPE_CHECKING, Any

from ._agent import CHUNK, SHM_SIZE, SLOTS
from ._lease import AVAILABLE as LENDING
from ._lease import Lease, leases
from ._wire import Connection

if TYPE_CHECKING:
    from .core import StrataFileSystem

#: How far a sequential reader asks for leases at once (one per block; the agent lends
#: up to 16 in one answer), so that it asks once per a few blocks, not once per block.
LEND_AHEAD = 256 << 20


class StrataReader(io.BufferedIOBase):
    """A file open for reading: short-circuit in this process where it can,
    ranged reads, and read-ahead for sequential ones.

    On a host whose worker holds the file's blocks, the bytes come from the
    worker's cache files, which this process maps and copies out of with
    their CRCs checked (``_lease.py``): as the Go client reads, no agent in
    between. Otherwise, and for whatever a lease does not serve, the agent
    reads: a read that starts where the last one ended (or at 0) is
    sequential, served from CHUNK-sized pieces of the agent's sequential
    reader (whose workers read ahead too), SLOTS - 1 of them asked for ahead
    while this process copies one out of the shared memory; any other read
    fetches exactly the bytes asked for (a ranged read: Parquet footers and
    column chunks), kept for the reads they cover.
    """

    def __init__(self, fs: StrataFileSystem, path: str) -> None:
        super().__init__()
        self.fs, self.path, self.mode = fs, path, "rb"
        self.blocksize = CHUNK
        self._agent = fs.agent
        self._uri = fs.uri(path)
        self._stream: Connection | None = None
        self._open_here()
        self.loc = 0

    def _open_here(self) -> None:
        ans = self._agent.call({"op": "open", "path": self._uri})
        self._agent_id = self._agent.socket()
        self._h: int = ans["h"]
        self.size: int = ans["size"]
        self.details = self.fs._info(self.path.partition("/")[0], ans["status"])
        self._ino: int = ans["status"]["ino"]
        self._pid = os.getpid()
        self._buf: Any = b""  # the last bytes the agent read: a view of the stream's slot, or a ranged read's
        self._buf_off = 0
        self._next: int | None = None  # the chunk whose answer comes next
        self._asked = -1  # the last chunk asked for
        self._seq_end = 0
        self._lending = LENDING and self.size > 0

    def _here(self) -> None:
        """Opens the file again in a forked child (see the module's doc)."""
        if self.closed:
            raise ValueError(f"{self.path}: read of a closed file")
        if self._pid == os.getpid():
            _same_agent(self)
            return
        if self._stream is not None:
            self._stream.close()  # the child's copy only; the parent's stays
            self._stream = None
        ino = self._ino
        self._open_here()
        if self._ino != ino:
            raise OSError(errno.ESTALE, f"{self.path}: replaced since the parent process opened it")

    # io's interface.

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.loc

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            base = 0
        elif whence == io.SEEK_CUR:
            base = self.loc
        elif whence == io.SEEK_END:
            base = self.size
        else:
            raise ValueError(f"{self.path}: seek with whence {whence!r}")
        if base + offset < 0:
            raise ValueError(f"{self.path}: seek to a negative position")
        self.loc = base + offset
        return self.loc

    def read(self, size: int | None = -1) -> bytes:
        n = self._span(self.loc, size)
        if n <= 0:
            return b""
        data = self._lent_whole(self.loc, n)
        if data is None:
            out = _Collect()
            self._copy(self.loc, n, self.loc == self._seq_end or self.loc == 0, out)
            data = out.result()
        self.loc += len(data)
        self._seq_end = self.loc
        return data

    def read1(self, size: int = -1) -> bytes:
        return self.read(size)

    def readinto(self, b: Any) -> int:
        """Reads into b with one copy: from the lent cache file, or the shared
        memory, straight into b (the Go client's Read into a buffer)."""
        dst = memoryview(b).cast("B")
        n = self._span(self.loc, len(dst))
        if n <= 0:
            return 0
        out = _Into(dst)
        self._copy(self.loc, n, self.loc == self._seq_end or self.loc == 0, out)
        self.loc += out.done
        self._seq_end = self.loc
        return out.done

    def readinto1(self, b: Any) -> int:
        return self.readinto(b)

    def pread(self, off: int, n: int) -> bytes:
        """Returns up to n bytes at off, without moving the position (a
        ranged read)."""
        n = self._span(off, n)
        if n <= 0:
            return b""
        data = self._lent_whole(off, n)
        if data is None:
            out = _Collect()
            self._copy(off, n, False, out)
            data = out.result()
        return data

    def close(self) -> None:
        if self.closed:
            return
        self._buf = b""  # NB: a view of the stream's memory, released before it goes back
        try:
            if self._pid == os.getpid():
                if self._stream is not None:
                    self._stream.drain()
                    self._agent.give(self._stream)
                self._agent.call({"op": "close", "h": self._h})
        finally:
            self._stream = None
            super().close()

    def __reduce__(self) -> Any:
        # Pickled (multiprocessing's spawn), it opens again where it lands.
        return _reopen, (self.fs, self.path, self.loc)

    # Reads.

    def _span(self, off: int, size: int | None) -> int:
        """How many bytes a read of size (negative: all) at off gets."""
        self._here()
        left = self.size - off
        return max(0, left if size is None or size < 0 else min(size, left))

    def _lent_whole(self, pos: int, n: int) -> bytes | None:
        """[pos, pos+n) from a lease this process holds, if one holds all of
        it and it reads back clean: a random read's one step, without the
        pieces _copy gathers. None sends the read the long way (which drops
        a lease that failed)."""
        if not self._lending:
            return None
        lease = leases.get(self._ino, pos)
        if lease is None or pos + n > lease.start + lease.end:
            return None
        return lease.take(pos, n)

    def _copy(self, pos: int, n: int, seq: bool, out: _Collect | _Into) -> None:
        """Hands out the bytes [pos, pos+n): through leases first, the rest
        through the agent."""
        end = pos + n
        while self._lending and pos < end:
            got = self._from_lease(pos, end - pos, seq, out)
            if not got:
                break
            pos += got
        if pos < end:
            self._via_agent(pos, end - pos, seq, out)

    def _from_lease(self, pos: int, n: int, seq: bool, out: _Collect | _Into) -> int:
        """Serves what a lease holds of [pos, pos+n); 0 if none can."""
        lease = self._lease_for(pos, n, seq)
        if lease is None:
            return 0
        k = min(n, lease.start + lease.end - pos)
        if out.lent(lease, pos, k):
            return k
        # A unit failed its CRC, or the file was cut short: the agent reads
        # it, whose client has the worker drop the page and fetch it again.
        leases.drop(self._ino, lease)
        return 0

    def _lease_for(self, pos: int, n: int, seq: bool) -> Lease | None:
        """A live lease holding pos: one this process has, or a new one the
        agent hands on; None where none is to be had."""
        lease = leases.get(self._ino, pos)
        if lease is not None:
            return lease
        try:
            with self._agent.connection() as conn:
                ans = conn.call({"op": "lend", "h": self._h, "off": pos, "len": LEND_AHEAD if seq else n,
                                 "seq": seq})
                if len(conn.fds) < len(ans["leases"]):
                    raise OSError(errno.EIO, "strata agent: leases came without their descriptors")
                fds = [conn.fds.popleft() for _ in ans["leases"]]
        except ConnectionError:
            raise
        except OSError as e:
            if e.errno == errno.EOPNOTSUPP:  # no worker here holds it, or not in blocks
                self._lending = False
            return None
        found = None
        for fd, lent in zip(fds, ans["leases"], strict=True):
            lease = Lease(fd, lent, ans["ttl_ms"], ans["look_ms"])
            leases.add(self._ino, lease)
            if found is None and lease.covers(pos):
                found = lease
        return found

    def _via_agent(self, pos: int, n: int, seq: bool, out: _Collect | _Into) -> None:
        """[pos, pos+n) from what the agent read last, if it holds them, else
        through the sequential reader, or one ranged read."""
        if self._buf_off <= pos and pos + n <= self._buf_off + len(self._buf):
            i = pos - self._buf_off
            out.put(self._buf[i:i + n])
        elif seq:
            self._read_seq(pos, n, out)
        else:
            self._buf, self._buf_off = memoryview(self._agent_pread(pos, n)), pos
            out.put(self._buf)

    def _agent_pread(self, off: int, n: int) -> bytes:
        """A ranged read by the agent; a long one in CHUNK pieces, pipelined
        as _chunk's."""
        with self._agent.connection() as conn:
            if n <= SHM_SIZE:
                got = conn.call({"op": "read", "h": self._h, "off": off, "len": n, "shm": 0})["n"]
                return bytes(conn.view[:got])
            end = off + n
            starts = list(range(off, end, CHUNK))
            for i in range(min(SLOTS - 1, len(starts))):
                self._ask(conn, starts[i], end, i % SLOTS, seq=False)
            pieces = []
            for i in range(len(starts)):
                got = conn.recv()["n"]
                if i + SLOTS - 1 < len(starts):
                    self._ask(conn, starts[i + SLOTS - 1], end, (i + SLOTS - 1) % SLOTS, seq=False)
                slot = (i % SLOTS) * CHUNK
                pieces.append(bytes(conn.view[slot:slot + got]))
            return b"".join(pieces)

    def _ask(self, conn: Connection, start: int, end: int, slot: int, seq: bool) -> None:
        conn.send({"op": "read", "h": self._h, "off": start, "len": min(CHUNK, end - start),
                   "shm": slot * CHUNK, "seq": seq})

    def _read_seq(self, pos: int, n: int, out: _Collect | _Into) -> None:
        """[pos, pos+n) through the sequential reader's chunks; each piece is
        a view of the shared memory, which out copies before the next chunk
        is asked for (it reuses a slot)."""
        end = pos + n
        while pos < end:
            k = pos // CHUNK
            if not (self._buf_off == k * CHUNK and len(self._buf) > pos - self._buf_off):
                self._buf = b""  # NB: its slot may be asked to hold another chunk now
                self._buf, self._buf_off = self._chunk(k), k * CHUNK
                if not len(self._buf):
                    break
            i = pos - self._buf_off
            piece = self._buf[i:i + (end - pos)]
            out.put(piece)
            pos += len(piece)

    def _chunk(self, k: int) -> memoryview:
        """Chunk k of the file. Chunk i goes to slot i % SLOTS; while chunk k
        is copied out, chunks k+1 .. k+SLOTS-1 are asked for (read-ahead), so
        that the agent reads on while this side copies."""
        if self._stream is None:
            self._stream = self._agent.take()
        conn = self._stream
        chunks = -(-self.size // CHUNK)
        if self._next != k:
            conn.drain()
            self._asked = k
            for i in range(k, min(k + SLOTS - 1, chunks)):
                self._ask(conn, i * CHUNK, self.size, i % SLOTS, seq=True)
                self._asked = i
        try:
            got = conn.recv()["n"]
        except BaseException:
            self._next = None
            raise
        self._next = k + 1
        if self._asked + 1 < chunks:
            self._asked += 1
            self._ask(conn, self._asked * CHUNK, self.size, self._asked % SLOTS, seq=True)
        slot = (k % SLOTS) * CHUNK
        return conn.view[slot:slot + got]


class _Collect:
    """Where read() puts the pieces it gathers: new bytes objects."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []

    def put(self, piece: Any) -> None:
        self.pieces.append(bytes(piece))

    def lent(self, lease: Lease, pos: int, k: int) -> bool:
        data = lease.take(pos, k)
        if data is None:
            return False
        self.pieces.append(data)
        return True

    def result(self) -> bytes:
        return self.pieces[0] if len(self.pieces) == 1 else b"".join(self.pieces)


class _Into:
    """Where readinto() puts them: the caller's buffer, in order."""

    def __init__(self, dst: memoryview) -> None:
        self.dst, self.done = dst, 0

    def put(self, piece: Any) -> None:
        self.dst[self.done:self.done + len(piece)] = piece
        self.done += len(piece)

    def lent(self, lease: Lease, pos: int, k: int) -> bool:
        if not lease.copy(self.dst[self.done:self.done + k], pos, k):
            return False
        self.done += k
        return True


def _same_agent(f: StrataReader | StrataWriter) -> None:
    """Raises if the agent the file was opened in is gone (another runs now)."""
    if f._agent.socket() != f._agent_id:
        raise OSError(errno.EBADF, f"{f.path}: the strata agent it was opened in exited; open it again")


def _reopen(fs: StrataFileSystem, path: str, loc: int) -> StrataReader:
    f = StrataReader(fs, path)
    f.seek(loc)
    return f


class StrataWriter(io.BufferedIOBase):
    """A file open for writing, streamed to the workers as it is written.

    Bytes are copied once, into the shared memory's current slot; a full
    slot is handed to the agent's writer while the other fills. ``flush()``
    is HDFS's hflush (what was written becomes visible to readers that open
    the file, and survives the kill of any process; in a cache-mode namespace, where a file is one
    object, visible only once closed, it does nothing more than send the
    bytes); ``fsync()`` is hsync (durable as well), which a cache-mode file refuses. The file
    is complete on ``close()``; ``discard()`` gives it up (a new file is
    removed).
    """

    def __init__(self, fs: StrataFileSystem, path: str, mode: str, block_size: int | None = None) -> None:
        super().__init__()
        self.fs, self.path, self.mode = fs, path, mode
        self._agent = fs.agent
        op = "append" if mode == "ab" else "create"
        self._conn = self._agent.take()
        try:
            ans = self._conn.call({"op": op, "path": fs.uri(path), "overwrite": mode == "wb",
                                   "parents": True, "block_size": block_size or 0})
        except BaseException:
            self._agent.give(self._conn)
            raise
        self._h: int = ans["h"]
        self._agent_id = self._agent.socket()
        self._pid = os.getpid()
        self._slot, self._fill = 0, 0
        self._done = False  # NB: io's close() calls flush(), which must then do nothing
        self.loc = 0

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.loc

    def _mine(self) -> Connection:
        if self.closed:
            raise ValueError(f"{self.path}: write to a closed file")
        if self._pid != os.getpid():
            raise OSError(errno.EBADF, f"{self.path}: open for writing in the parent process; "
                                       "a forked child opens its own files")
        _same_agent(self)
        return self._conn

    def write(self, b: Any) -> int:
        conn = self._mine()
        mv = memoryview(b).cast("B")
        total = len(mv)
        while len(mv):
            k = min(len(mv), CHUNK - self._fill)
            base = self._slot * CHUNK + self._fill
            conn.view[base:base + k] = mv[:k]
            self._fill += k
            mv = mv[k:]
            if self._fill == CHUNK:
                self._send_slot(conn)
        self.loc += total
        return total

    def _send_slot(self, conn: Connection) -> None:
        """Hands the current slot to the agent and moves to the other, once
        the agent is done with it."""
        if self._fill:
            conn.send({"op": "write", "h": self._h, "shm": self._slot * CHUNK, "len": self._fill})
            self._slot, self._fill = self._slot ^ 1, 0
        while conn.pending > 1:
            conn.recv()

    def _sent(self, conn: Connection) -> None:
        self._send_slot(conn)
        while conn.pending:
            conn.recv()

    def flush(self) -> None:
        """hflush: see the class's doc."""
        if self.closed or self._done or self._pid != os.getpid():
            return
        conn = self._mine()
        self._sent(conn)
        conn.call({"op": "flush", "h": self._h})

    def fsync(self) -> None:
        """hsync: what was written is visible and durable when it returns."""
        conn = self._mine()
        self._sent(conn)
        conn.call({"op": "flush", "h": self._h, "sync": True, "hard": True})

    def close(self) -> None:
        if self.closed:
            return
        self._done = True
        if self._pid != os.getpid():
            super().close()  # the parent's file: not the child's to complete
            return
        conn = self._conn
        try:
            self._sent(conn)
            conn.call({"op": "close", "h": self._h})
        except BaseException:
            self._end(conn, "abort")
            raise
        finally:
            super().close()
        self._agent.give(conn)

    def discard(self) -> None:
        """Gives the write up: a new file is removed, as a failed write's is."""
        if self.closed or self._pid != os.getpid():
            return
        self._done = True
        self._end(self._conn, "abort")
        super().close()

    def _end(self, conn: Connection, op: str) -> None:
        try:
            conn.drain()
            conn.call({"op": op, "h": self._h})
            self._agent.give(conn)
        except OSError:
            conn.close()
