"""Short-circuit in this process: the agent hands on a lease of a block's
cache file that the worker on this host lent it (``client.Lent`` in Go says
what the holder must do), and this process reads the file itself, through a
mapping, every unit checked against its CRC in the same pass as the copy
(``_fast.c``), as the Go client's leases are read (internal/client/sclease.go).

Anything else goes to the agent: a read no lease covers, a lease past its
time, a file the cache let go of (no link left) or cut short, a unit that
fails its CRC (the agent's client reads it again, which has the worker drop
the page and fetch it anew). Nothing here retries.
"""

from __future__ import annotations

import array
import mmap
import os
import threading
import time
from typing import Any

try:
    from . import _fast

    AVAILABLE = bool(_fast.available())
except ImportError:  # built without a C compiler: the agent reads everything
    AVAILABLE = False


class Lease:
    """A lent range of one block's cache file, mapped."""

    def __init__(self, fd: int, lent: dict[str, Any], ttl_ms: int, look_ms: int) -> None:
        self.start: int = lent["start"]  # the block's offset in the file
        self.first: int = lent["first"]  # the lent range of the block: [first, end)
        self.end: int = lent["end"]
        self.unit: int = lent["unit"]  # the bytes each CRC covers
        self.crcs = array.array("I", lent["crcs"]).tobytes()
        self.fd = fd
        # NB: first is a page boundary of the cache, a multiple of the system's page.
        self.map = mmap.mmap(fd, self.end - self.first, prot=mmap.PROT_READ, offset=self.first)
        now = time.monotonic()
        self.until = now + ttl_ms / 1000.0
        self.look_every = look_ms / 1000.0
        self.looked = now

    def covers(self, pos: int) -> bool:
        """Whether the lease holds the file's byte at pos."""
        return self.first <= pos - self.start < self.end

    def alive(self) -> bool:
        """Within its time, and its file linked and long enough, as it was at
        the last look (an fstat at most every look_every)."""
        now = time.monotonic()
        if now >= self.until:
            return False
        if now - self.looked >= self.look_every:
            st = os.fstat(self.fd)
            if st.st_nlink == 0 or st.st_size < self.end:
                return False
            self.looked = now
        return True

    def take(self, pos: int, n: int) -> bytes | None:
        """The file's bytes [pos, pos+n), which must lie in the lease, each
        unit checked; None if one failed its check, the mapping faulted, or
        another thread closed the lease meanwhile."""
        try:
            got = _fast.take(self.map, self.end - self.first, self.unit, self.crcs, pos - self.start - self.first, n)
        except (OSError, ValueError):
            return None
        return got if isinstance(got, bytes) else None

    def copy(self, dst: Any, pos: int, n: int) -> bool:
        """take into dst (a writable buffer of n bytes)."""
        try:
            bad = _fast.copy(dst, self.map, self.end - self.first, self.unit, self.crcs,
                             pos - self.start - self.first, n)
        except (OSError, ValueError):
            return False
        return bad < 0

    def close(self) -> None:
        try:
            self.map.close()
        except BufferError:
            pass  # a copy of another thread holds it: unmapped when that ends and it is collected
        finally:
            os.close(self.fd)


#: Leases this process keeps, all files together (as a Go client's per worker).
MAX_LEASES = 64


class Leases:
    """This process's leases by file (its inode), shared by its readers as
    the Go client's are by its. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_file: dict[int, list[Lease]] = {}
        self._order: list[tuple[int, Lease]] = []

    def get(self, ino: int, pos: int) -> Lease | None:
        """A live lease of file ino holding its byte at pos."""
        with self._lock:
            for lease in self._by_file.get(ino, ()):
                if lease.covers(pos):
                    if lease.alive():
                        return lease
                    self._drop_locked(ino, lease)
                    return None
        return None

    def add(self, ino: int, lease: Lease) -> None:
        with self._lock:
            self._by_file.setdefault(ino, []).append(lease)
            self._order.append((ino, lease))
            while len(self._order) > MAX_LEASES:
                self._drop_locked(*self._order[0])

    def drop(self, ino: int, lease: Lease) -> None:
        """Ends a lease that failed a read."""
        with self._lock:
            self._drop_locked(ino, lease)

    def _drop_locked(self, ino: int, lease: Lease) -> None:
        held = self._by_file.get(ino, [])
        if lease not in held:
            return
        held.remove(lease)
        if not held:
            del self._by_file[ino]
        self._order.remove((ino, lease))
        lease.close()

    def after_fork(self) -> None:
        """In a forked child: the leases are the child's copies; it ends them
        (the parent's stay) and asks for its own."""
        self._lock = threading.Lock()
        order, self._order, self._by_file = self._order, [], {}
        for _, lease in order:
            lease.close()


#: The process's leases.
leases = Leases()
os.register_at_fork(after_in_child=leases.after_fork)
