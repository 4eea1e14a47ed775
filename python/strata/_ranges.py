"""cat_ranges: many byte ranges, of one file or many, in few calls.

Ranges are packed into calls that each fit the shared memory; the agent
opens each file of a call once and reads its ranges concurrently (Parquet
readers ask for a footer, then for column chunks, of many files at once).
A range larger than the shared memory is read on its own through a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._agent import SHM_SIZE
from ._errors import error_from

if TYPE_CHECKING:
    from .core import StrataFileSystem


def cat_ranges(fs: StrataFileSystem, paths: list[str], starts: Any, ends: Any,
               on_error: str) -> list[Any]:
    """fsspec's cat_ranges (see StrataFileSystem.cat_ranges)."""
    if not isinstance(paths, list):
        raise TypeError("cat_ranges: paths must be a list")
    starts = starts if isinstance(starts, list) else [starts] * len(paths)
    ends = ends if isinstance(ends, list) else [ends] * len(paths)
    if len(starts) != len(paths) or len(ends) != len(paths):
        raise ValueError("cat_ranges: paths, starts and ends differ in length")
    out: list[Any] = [None] * len(paths)
    sizes: dict[str, int] = {}
    items = []
    for i, (p, s, e) in enumerate(zip(paths, starts, ends, strict=True)):
        p = fs._strip_protocol(p)
        try:
            off, n = _resolve(fs, p, s, e, sizes)
        except Exception as err:
            out[i] = err
            continue
        if n > SHM_SIZE:
            out[i] = _whole(fs, p, off, n)
        elif n <= 0:
            out[i] = b""
        else:
            items.append((i, fs.uri(p), off, n))
    for batch in _batches(items):
        _read_batch(fs, batch, out)
    if on_error == "raise":
        for r in out:
            if isinstance(r, Exception):
                raise r
    return out


def _resolve(fs: StrataFileSystem, path: str, start: int | None, end: int | None,
             sizes: dict[str, int]) -> tuple[int, int]:
    """The offset and length of a range whose bounds may be None or count
    from the end (which needs the file's size: one stat per file)."""
    if (start is None or start < 0 or end is None or end < 0) and path not in sizes:
        sizes[path] = fs.info(path)["size"]
    size = sizes.get(path, 0)  # NB: only bounds that count from the end need it
    s = 0 if start is None else (start if start >= 0 else max(0, size + start))
    e = size if end is None else (end if end >= 0 else size + end)
    return s, max(0, e - s)


def _whole(fs: StrataFileSystem, path: str, off: int, n: int) -> Any:
    try:
        with fs._reader(path) as f:
            return f.pread(off, n)
    except Exception as err:
        return err


def _batches(items: list[tuple[int, str, int, int]]) -> list[list[tuple[int, str, int, int]]]:
    batches: list[list[tuple[int, str, int, int]]] = []
    used = SHM_SIZE
    for it in items:
        if used + it[3] > SHM_SIZE:
            batches.append([])
            used = 0
        batches[-1].append(it)
        used += it[3]
    return batches


def _read_batch(fs: StrataFileSystem, batch: list[tuple[int, str, int, int]], out: list[Any]) -> None:
    shm, ranges = 0, list[dict[str, Any]]()
    for _, uri, off, n in batch:
        ranges.append({"path": uri, "off": off, "len": n, "shm": shm})
        shm += n
    with fs.agent.connection() as conn:
        answers = conn.call({"op": "ranges", "ranges": ranges})["ranges"]
        for (i, _, _, _), rg, ans in zip(batch, ranges, answers, strict=True):
            if "cond" in ans:
                out[i] = error_from(ans["cond"], ans["msg"])
            else:
                out[i] = bytes(conn.view[rg["shm"]:rg["shm"] + ans["n"]])
