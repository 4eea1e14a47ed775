"""StrataFileSystem: fsspec's file system for ``strata://`` URLs.

Paths are ``namespace/path`` (``strata://default/a/b.parquet`` is the file
``/a/b.parquet`` of the namespace ``default``), as s3fs's are ``bucket/key``.
Every call goes to the Go client through the agent (``_agent.py``); this
module only adapts fsspec's methods to the agent's operations.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from fsspec.spec import AbstractFileSystem

from . import _agent
from ._files import StrataReader, StrataWriter

#: The storage options that become the agent's flags (the CLI's names);
#: the rest of the CLI's settings come from the same environment variables.
_FLAGS = {"meta": "--meta", "token_file": "--token-file", "tls_ca": "--tls-ca",
          "tls_cert": "--tls-cert", "tls_key": "--tls-key", "timeout": "--timeout"}

_agents: dict[tuple[Any, ...], _agent.Agent] = {}
_agents_lock = threading.Lock()


def _agent_for(binary: str | None, flags: list[str], token: str | None, plaintext: bool | None) -> _agent.Agent:
    """One agent per binary and configuration in a process tree."""
    key = (binary, tuple(flags), token, plaintext)
    with _agents_lock:
        a = _agents.get(key)
        if a is None:
            env = dict(os.environ)
            if token:
                env["STRATA_TOKEN"] = token  # NB: not a flag, which ps would show
            if plaintext is not None:  # given, it overrides the environment's either way
                env["STRATA_PLAINTEXT"] = "1" if plaintext else "0"
            a = _agents[key] = _agent.Agent(_agent.find_binary(binary), flags, env)
        return a


class StrataFileSystem(AbstractFileSystem):
    """fsspec's ``strata`` protocol.

    Storage options (each defaults to what the CLI uses: its environment
    variables, then its defaults; docs/python.md):

    - ``meta``: the namespace service, ``host:port`` or its members' comma-separated;
    - ``token``: the token itself; ``token_file``: a file holding it;
    - ``tls_ca``, ``tls_cert``, ``tls_key``: TLS files; ``plaintext``: True for no TLS, False
      for TLS whatever $STRATA_PLAINTEXT says;
    - ``timeout``: how long to wait for a first connection (``"10s"`` or seconds);
    - ``binary``: the strata binary that runs the agent.
    """

    protocol = "strata"
    root_marker = ""

    def __init__(self, meta: str | list[str] | None = None, token: str | None = None,
                 token_file: str | None = None, tls_ca: str | None = None,
                 tls_cert: str | None = None, tls_key: str | None = None,
                 plaintext: bool | None = None, timeout: str | float | None = None,
                 binary: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(meta, (list, tuple)):
            meta = ",".join(meta)
        given = {"meta": meta, "token_file": token_file, "tls_ca": tls_ca, "tls_cert": tls_cert,
                 "tls_key": tls_key, "timeout": timeout}
        flags = [f"{_FLAGS[k]}={v}" for k, v in given.items() if v is not None]
        self.agent = _agent_for(binary, flags, token, plaintext)

    # Paths.

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path)
        if path.startswith("strata://"):
            path = path[len("strata://"):]
        return path.strip("/")

    @staticmethod
    def uri(path: str) -> str:
        """Returns the Go client's URI of an fsspec path ``namespace/path``."""
        ns, _, rest = path.partition("/")
        if not ns:
            raise ValueError("a strata path names its namespace first: namespace/path")
        return f"strata://{ns}/{rest}"

    def _call(self, op: str, path: str | None = None, **fields: Any) -> dict[str, Any]:
        req: dict[str, Any] = {"op": op, **fields}
        if path is not None:
            req["path"] = self.uri(self._strip_protocol(path))
        return self.agent.call(req)

    @staticmethod
    def _info(ns: str, st: dict[str, Any]) -> dict[str, Any]:
        name = ns + st["path"] if st["path"] != "/" else ns
        return {"name": name.rstrip("/"), "size": st["size"] if not st["dir"] else 0,
                "type": "directory" if st["dir"] else "file", "mtime": st["mtime"] / 1000.0,
                "atime": st["atime"] / 1000.0, "mode": st["perm"], "owner": st["owner"],
                "group": st["group"], "ino": st["ino"], "block_size": st.get("bsize", 0),
                "replication": st.get("repl", 0), "writing": st.get("writing", False),
                "islink": False}

    # Metadata.

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        st = self._call("stat", path)["status"]
        return self._info(path.partition("/")[0], st)

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        """Lists a directory page by page (a file lists as itself)."""
        path = self._strip_protocol(path)
        ns = path.partition("/")[0]
        out: list[dict[str, Any]] = []
        after = ""
        while True:
            ans = self._call("list", path, after=after)
            out.extend(self._info(ns, st) for st in ans["entries"])
            if not ans["more"] or not ans["entries"]:
                break
            after = ans["entries"][-1]["path"].rsplit("/", 1)[-1]
        return out if detail else [e["name"] for e in out]

    def exists(self, path: str, **kwargs: Any) -> bool:
        """Whether path exists; unlike fsspec's default, only "no such file"
        answers False: a service that cannot be reached raises."""
        try:
            self.info(path)
            return True
        except (FileNotFoundError, NotADirectoryError):
            return False

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        ans = self._call("mkdir", path, parents=create_parents, perm=kwargs.get("mode", 0o777))
        if not ans["created"]:
            raise FileExistsError(17, f"mkdir {path}: it exists")

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        path = self._strip_protocol(path)
        if "/" not in path:
            return  # a namespace's root is there, or no mkdir makes it
        created = self._call("mkdir", path, parents=True, perm=0o777)["created"]
        if not created and not exist_ok:
            raise FileExistsError(17, f"makedirs {path}: it exists")

    def rmdir(self, path: str) -> None:
        if not self.isdir(path):
            raise NotADirectoryError(20, f"rmdir {path}: not a directory")
        self._call("delete", path, recursive=False)

    def rm_file(self, path: str) -> None:
        if not self._call("delete", path, recursive=False)["deleted"]:
            raise FileNotFoundError(2, f"rm {path}: no such file")

    def _rm(self, path: str) -> None:
        self.rm_file(path)

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        """Deletes paths (globs expanded); a directory with ``recursive``
        in one call, which the service answers without walking it."""
        if maxdepth is not None:
            super().rm(path, recursive=recursive, maxdepth=maxdepth)
            return
        for p in self.expand_path(path, recursive=False):
            self._call("delete", p, recursive=recursive)

    def mv(self, path1: Any, path2: str, recursive: bool = False, maxdepth: int | None = None,
           **kwargs: Any) -> None:
        """Renames path1 to path2 in one call (O(1) in block mode), or into
        path2 if it is a directory, as ``mv`` does; a directory moves whole."""
        if isinstance(path1, list):
            for p in path1:
                self.mv(p, path2, recursive=recursive, maxdepth=maxdepth, **kwargs)
            return
        src, dst = self._strip_protocol(path1), self._strip_protocol(path2)
        if src == dst:
            return
        self._call("rename", src, dst=self.uri(dst))

    def du(self, path: str, total: bool = True, maxdepth: int | None = None, withdirs: bool = False,
           **kwargs: Any) -> Any:
        """A directory's size from the service's aggregates, without a walk."""
        if total and maxdepth is None:
            return self._call("summary", path)["length"]
        return super().du(path, total=total, maxdepth=maxdepth, withdirs=withdirs, **kwargs)

    def chmod(self, path: str, mode: int) -> None:
        """Sets path's permission bits."""
        self._call("chmod", path, perm=mode)

    def modified(self, path: str) -> Any:
        import datetime

        return datetime.datetime.fromtimestamp(self.info(path)["mtime"], tz=datetime.UTC)

    def touch(self, path: str, truncate: bool = True, **kwargs: Any) -> None:
        if truncate or not self.exists(path):
            self.pipe_file(path, b"")
        else:
            self._call("touch", path)

    # Data.

    def _open(self, path: str, mode: str = "rb", block_size: int | None = None,
              autocommit: bool = True, cache_options: Any = None,
              **kwargs: Any) -> StrataReader | StrataWriter:
        path = self._strip_protocol(path)
        if mode == "rb":
            return self._reader(path)
        if mode in ("wb", "xb", "ab"):
            return StrataWriter(self, path, mode, block_size=kwargs.get("strata_block_size"))
        raise ValueError(f"open {path}: mode {mode!r} (strata files are read (rb) or written (wb, xb, ab))")

    def _reader(self, path: str) -> StrataReader:
        return StrataReader(self, self._strip_protocol(path))

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        if start is None and end is None:
            with self._reader(path) as f:
                return f.read()
        with self._reader(path) as f:
            size = f.size
            s = 0 if start is None else (start if start >= 0 else max(0, size + start))
            e = size if end is None else (end if end >= 0 else size + end)
            return f.pread(s, max(0, min(e, size) - s))

    def cat_ranges(self, paths: list[str], starts: Any, ends: Any, max_gap: int | None = None,
                   on_error: str = "return", **kwargs: Any) -> list[Any]:
        """Reads many ranges in few calls: each call carries as many as fit in
        the shared memory, which the agent reads concurrently (Parquet footers
        and column chunks of many files at once)."""
        from ._ranges import cat_ranges

        return cat_ranges(self, paths, starts, ends, on_error)

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        """Writes a whole file; one that fits the shared memory in one call."""
        path = self._strip_protocol(path)
        data = memoryview(value).cast("B")
        if len(data) > _agent.SHM_SIZE:
            with self._open(path, "xb" if mode == "create" else "wb") as f:
                f.write(data)
            return
        with self.agent.connection() as conn:
            conn.view[: len(data)] = data
            conn.call({"op": "put", "path": self.uri(path), "shm": 0, "len": len(data),
                       "overwrite": mode != "create", "parents": True})

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        """Copies through this process (the service has no copy of its own);
        a directory is copied as a new directory (fsspec's recursive copy
        hands them here too)."""
        try:
            src = self._open(path1)
        except IsADirectoryError:
            self.makedirs(path2, exist_ok=True)
            return
        with src, self._open(path2, "wb") as dst:
            while chunk := src.read(_agent.CHUNK):
                dst.write(chunk)

    def created(self, path: str) -> Any:
        raise NotImplementedError("strata keeps no creation time; see modified()")
