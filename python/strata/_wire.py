"""One connection to the agent: frames of JSON over a Unix socket, and a
region of memory shared with the agent through which every byte of file
data moves (internal/agent/doc.go describes the protocol; its
testdata/frames.txt holds a conversation byte for byte, which tests/test_wire.py
checks this module against)."""

from __future__ import annotations

import array
import fcntl
import json
import mmap
import os
import socket
import struct
from collections import deque
from typing import Any

from ._errors import error_from

#: The protocol version the hello names.
VERSION = 1

#: Bounds an answer the agent sends: a page of a listing is the largest.
MAX_ANSWER = 64 << 20

_HEADER = struct.Struct(">I")
#: Room for the descriptors one answer may bring (the agent's maxLent leases).
MAX_FDS = 16
_ANCILLARY = socket.CMSG_SPACE(MAX_FDS * array.array("i").itemsize)


def encode(req: dict[str, Any]) -> bytes:
    """Returns the frame of a request: its length, then its JSON."""
    body = json.dumps(req, separators=(",", ":")).encode()
    return _HEADER.pack(len(body)) + body


def decode(body: bytes) -> dict[str, Any]:
    """Returns an answer's fields, or raises the exception its condition maps to."""
    ans = json.loads(body)
    if not isinstance(ans, dict):
        raise OSError(f"strata agent: an answer that is not an object: {body[:100]!r}")
    if not ans.get("ok"):
        raise error_from(str(ans.get("cond", "io")), str(ans.get("msg", "no message")))
    return ans


class Connection:
    """A connection to the agent, used by one thread at a time.

    ``view`` is the shared memory (``shm_size`` bytes): a read request names
    where in it the agent puts the bytes, a write where it finds them. The
    caller may send several requests before reading their answers, which come
    in order; ``pending`` counts those not yet read. Descriptors that come
    with answers (a lend's) queue in ``fds``, in order.
    """

    def __init__(self, path: str, shm_size: int) -> None:
        self.pid = os.getpid()
        self.pending = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except (ConnectionRefusedError, FileNotFoundError):
            self.sock.close()
            raise  # the agent is gone: Agent.take starts another
        except OSError as e:
            self.sock.close()
            raise ConnectionError(f"strata agent at {path}: {e.strerror or e}") from e
        self._buf = bytearray(256 << 10)
        self._start = self._end = 0
        self.fds: deque[int] = deque()
        try:
            self.shm, self.view = _shared(self.sock, shm_size)
            self.recv()
        except BaseException:
            self.close()
            raise

    def send(self, req: dict[str, Any]) -> None:
        """Sends a request; its answer is read by a later recv."""
        self.sock.sendall(encode(req))
        self.pending += 1

    def recv(self) -> dict[str, Any]:
        """Reads the next answer, raising the exception of a failed one."""
        self._fill(4)
        (n,) = _HEADER.unpack_from(self._buf, self._start)
        if n > MAX_ANSWER:
            raise ConnectionError(f"strata agent: an answer of {n} bytes (at most {MAX_ANSWER})")
        self._fill(4 + n)
        body = bytes(self._buf[self._start + 4:self._start + 4 + n])
        self._start += 4 + n
        if self._start == self._end:
            self._start = self._end = 0
        self.pending = max(0, self.pending - 1)
        return decode(body)

    def _fill(self, need: int) -> None:
        """Reads until the buffer holds need bytes from its start (recvmsg, so
        that descriptors sent with them are kept)."""
        while self._end - self._start < need:
            if self._start and len(self._buf) - self._start < need:
                self._buf[: self._end - self._start] = self._buf[self._start:self._end]
                self._end -= self._start
                self._start = 0
            if len(self._buf) - self._start < need:  # NB: then there is room past _end too
                self._buf.extend(bytes(self._start + need - len(self._buf)))
            got, anc, _, _ = self.sock.recvmsg_into([memoryview(self._buf)[self._end:]], _ANCILLARY)
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds = array.array("i")
                    fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
                    self.fds.extend(fds)
            if got == 0:
                raise ConnectionError("strata agent: the connection closed (did the agent exit?)")
            self._end += got

    def call(self, req: dict[str, Any]) -> dict[str, Any]:
        """Sends a request and returns its answer."""
        self.send(req)
        return self.recv()

    def drain(self) -> None:
        """Reads and drops the answers still pending (their errors too)."""
        while self.pending:
            try:
                self.recv()
            except ConnectionError:
                raise
            except OSError:
                pass

    def close(self) -> None:
        """Closes the socket and unmaps the shared memory."""
        self.sock.close()
        for fd in getattr(self, "fds", ()):
            os.close(fd)
        view = getattr(self, "view", None)
        if view is not None:
            try:
                view.release()
                self.shm.close()
            except BufferError:
                pass  # a view of it is still held (a reader's last chunk): unmapped when collected


def _shared(sock: socket.socket, size: int) -> tuple[mmap.mmap, memoryview]:
    """Makes the connection's shared memory, a memfd sealed against
    shrinking and growing (the agent refuses any other), and sends it with
    the hello."""
    fd = os.memfd_create("strata-agent", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
        shm = mmap.mmap(fd, size)
        socket.send_fds(sock, [encode({"op": "hello", "version": VERSION})], [fd])
    finally:
        os.close(fd)
    return shm, memoryview(shm)
