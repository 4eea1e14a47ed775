"""The agent: a ``strata agent`` process that holds the Go client for this
process and every child it forks, and the pool of connections to it.

Why a process (docs/python.md): a Go runtime loaded into Python does not
survive fork, and data loaders fork after the parent opened files. The agent
is started once per process tree and configuration; a forked child drops
the connections it inherited (they are its parent's, mid-conversation
perhaps) and connects to the same agent anew. The agent exits when the pipe
on its standard input closes, which happens once the process that started
it and every child forked since have exited.

Nothing here retries a call: the Go client in the agent is the one layer
that does (failover, request ids). A connection the agent closed is
reported as ConnectionError.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from ._wire import Connection

#: Bytes of memory each connection shares with the agent: SLOTS slots of
#: CHUNK, so that the agent fills the next ones while this side copies one
#: out (read-ahead, pipelined writes).
CHUNK = 4 << 20
SLOTS = 4
SHM_SIZE = SLOTS * CHUNK

#: How long the agent may take to start listening.
START_TIMEOUT = 30.0

#: Idle connections kept per process; more are closed when given back.
MAX_IDLE = 16


def find_binary(explicit: str | None) -> str:
    """Returns the strata binary: ``explicit``, else $STRATA_BINARY, else the
    one bundled in the wheel, else ``strata`` on PATH."""
    for candidate in (explicit, os.environ.get("STRATA_BINARY")):
        if candidate:
            return candidate
    bundled = Path(__file__).parent / "_bin" / "strata"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    found = shutil.which("strata")
    if found:
        return found
    raise FileNotFoundError(
        "strata: no strata binary: install the wheel that bundles it (make python-wheel), "
        "put strata on PATH, or set STRATA_BINARY or the binary= storage option")


class Agent:
    """A running agent and this process's connections to it. Thread-safe."""

    def __init__(self, binary: str, flags: list[str], env: dict[str, str]) -> None:
        self._binary, self._flags, self._env = binary, flags, env
        self._lock = threading.Lock()
        self._idle: list[Connection] = []
        self._pid = os.getpid()
        self._proc: subprocess.Popen[bytes] | None = None
        self._socket: str | None = None
        _agents.add(self)

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """Lends a connection for one call (or a pipelined few)."""
        conn = self.take()
        try:
            yield conn
        except ConnectionError:
            conn.close()
            raise
        except OSError:
            self.give(conn)  # an answer's error: the connection is in step (give checks)
            raise
        except BaseException:
            conn.close()  # NB: its answers may be out of step now
            raise
        self.give(conn)

    def call(self, req: dict[str, Any]) -> dict[str, Any]:
        """Makes one call on a lent connection."""
        with self.connection() as conn:
            return conn.call(req)

    def take(self) -> Connection:
        """Returns an idle connection of this process, or a new one. An agent
        that is gone (killed, say: its socket refuses) is started again, once;
        the files open in it are lost, and their next calls say so."""
        with self._lock:
            self._forked_locked()
            if self._idle:
                return self._idle.pop()
            path = self._start_locked()
        try:
            return Connection(path, SHM_SIZE)
        except (ConnectionRefusedError, FileNotFoundError):
            with self._lock:
                if self._socket == path:
                    self._socket = None
                path = self._start_locked()
            return Connection(path, SHM_SIZE)

    def socket(self) -> str | None:
        """The running agent's socket: a new one for each agent started."""
        return self._socket

    def give(self, conn: Connection) -> None:
        """Takes back a connection whose answers were all read."""
        with self._lock:
            self._forked_locked()
            if conn.pid == os.getpid() and conn.pending == 0 and len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        if conn.pid == os.getpid():
            conn.close()

    def after_fork(self) -> None:
        """In a forked child: the inherited connections are the parent's; the
        child closes its copies (the parent's stay open) and makes its own."""
        self._lock = threading.Lock()
        idle, self._idle = self._idle, []
        for c in idle:
            c.close()
        self._pid = os.getpid()

    def _forked_locked(self) -> None:
        if self._pid != os.getpid():
            self.after_fork()

    def _start_locked(self) -> str:
        """Returns the socket of the running agent, starting one if there is
        none or it exited."""
        if self._socket and os.path.exists(self._socket):
            return self._socket
        self._socket = _spawn(self._binary, self._flags, self._env)[1]
        return self._socket

    def close(self) -> None:
        """Closes this process's idle connections (the agent lives on while
        other processes of its tree use it)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            if c.pid == os.getpid():
                c.close()


def _spawn(binary: str, flags: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """Starts an agent listening in a new private directory and waits until
    it says it is ready; its failure to start raises with what it said."""
    d = tempfile.mkdtemp(prefix="strata-agent-")
    sock = os.path.join(d, "agent.sock")
    log = tempfile.TemporaryFile()
    # NB: stdin is the agent's lifeline: the pipe's write end stays in this
    # process and in every child it forks (fork keeps descriptors; an exec'd
    # program does not get it, being close-on-exec), and the agent exits at
    # its end of file.
    proc = subprocess.Popen([binary, "agent", "--socket", sock, *flags], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=log, env=env, cwd=d)
    _children.append((proc, log, d))
    assert proc.stdout is not None
    if _wait_ready(proc.stdout, START_TIMEOUT):
        return proc, sock
    proc.kill()
    proc.wait()
    log.seek(0)
    said = log.read().decode(errors="replace").strip()
    raise ConnectionError(f"strata agent ({binary}) did not start: {said or 'it said nothing'}")


def _wait_ready(out: IO[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    line = b""
    fd = out.fileno()
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False
        b = os.read(fd, 64)
        if not b:
            return False
        line += b
    return line.strip() == b"ready"


#: Every agent handle of this process, to reset in a forked child.
_agents: weakref.WeakSet[Agent] = weakref.WeakSet()
#: The agents this process (or its parent, before fork) started, with their logs and
#: directories.
_children: list[tuple[subprocess.Popen[bytes], IO[bytes], str]] = []


def _after_fork_in_child() -> None:
    for a in list(_agents):
        a.after_fork()
    # NB: _children stays: its Popen objects hold the agents' stdin pipes, the lifelines,
    # which collecting them would close (a child keeps its parent's agent alive).


os.register_at_fork(after_in_child=_after_fork_in_child)
