"""python -m strata.bench: the Python package against the Go client, in one sitting.

Each measurement is made by both, round after round in turn (so that other load on the
machine hits them alike), and the median of the rounds is reported with its ratio to Go's, and
so is the best round (other load only ever slows a round: on a busy machine the best rounds
are the ones it disturbed least), and Go's CPU time per operation over Python's (what the rates'
ratio would be were both bound by their CPU alone, as on an idle machine):

- seq: a cached 1 GiB file read whole, 4 MiB a call (Go: ``Reader.Read`` into one buffer;
  Python: ``f.readinto`` one buffer, as Go does, and ``f.read``, a new bytes object a call);
- random: 64 KiB reads at random aligned offsets of the same file, the same offsets for both
  (Python: ``seek`` + ``read`` on an open file, one call at a time; and ``cat_ranges`` of 64
  at once, which the agent reads concurrently);
- noop: a call to the agent that does nothing (what every operation pays for the hop);
- stat, list (a directory of 100 files, whole), create (an empty file, one call each).

Go's figures are the Go client's own, measured inside the agent (its ``bench`` operation), so
they carry no cost of the hop to Python; Python's carry all of it. CPU seconds count both
processes for Python (this one and the agent), the agent alone for Go.

By default it starts a ``strata server --dev`` of its own in a temporary directory (one
namespace service and one worker on this host: reads are short-circuit); ``--meta`` uses a
running cluster instead (its token and TLS as the CLI finds them).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _agent
from .core import StrataFileSystem

MiB = 1 << 20


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m strata.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meta", help="a running cluster's namespace service (default: start a dev server)")
    ap.add_argument("--rounds", type=int, default=9, help="rounds of each measurement (default 9)")
    ap.add_argument("--size", type=int, default=1024, help="the file's size in MiB (default 1024)")
    ap.add_argument("--random-reads", type=int, default=2000, help="64 KiB reads a round (default 2000)")
    ap.add_argument("--meta-ops", type=int, default=1000, help="stats and creates a round (default 1000)")
    ap.add_argument("--lists", type=int, default=200, help="listings a round (default 200)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    with _cluster(args.meta) as fs:
        results = run(fs, args)
    report(results, args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


class _cluster:
    """A dev server of the benchmark's own, or the one --meta names."""

    def __init__(self, meta: str | None) -> None:
        self.meta = meta
        self.proc: subprocess.Popen[bytes] | None = None
        self.dir: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> StrataFileSystem:
        if self.meta:
            return StrataFileSystem(meta=self.meta)
        binary = _agent.find_binary(None)
        self.dir = tempfile.TemporaryDirectory(prefix="strata-bench-")
        d = Path(self.dir.name)
        log = open(d / "server.log", "wb")
        self.proc = subprocess.Popen([binary, "server", "--dev", "--listen", "127.0.0.1:0", "--data-dir",
                                      str(d / "data"), "--client-token-file=", "--plaintext",
                                      "--worker-cache-size", "4GiB"], stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.proc.poll() is None:
            m = re.search(r"^strata: serving on (\S+)", (d / "server.log").read_text(errors="replace"), re.M)
            if m:
                return StrataFileSystem(meta=m.group(1), token_file=str(d / "data" / "token"), plaintext=True,
                                        binary=binary)
            time.sleep(0.05)
        raise RuntimeError("the dev server did not start:\n" + (d / "server.log").read_text(errors="replace"))

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        if self.dir is not None:
            self.dir.cleanup()


def _agent_cpu(fs: StrataFileSystem) -> float:
    """CPU seconds the agent process has used (its /proc stat), 0 if it is not ours."""
    try:
        proc = next(p for p, _, d in _agent._children if fs.agent._socket and fs.agent._socket.startswith(d))
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (StopIteration, OSError):
        return 0.0


def _py(fs: StrataFileSystem, fn: Callable[[], int]) -> dict[str, float]:
    """Times fn in this process: elapsed, CPU (this process and the agent), its count."""
    cpu0, agent0, t0 = time.process_time(), _agent_cpu(fs), time.perf_counter()
    n = fn()
    el = time.perf_counter() - t0
    return {"seconds": el, "cpu": time.process_time() - cpu0 + _agent_cpu(fs) - agent0, "n": n}


def _go(fs: StrataFileSystem, **bench: Any) -> dict[str, float]:
    ans = fs.agent.call({"op": "bench", "bench": bench})
    return {"seconds": ans["seconds"], "cpu": ans["cpu"], "n": ans["n"]}


def run(fs: StrataFileSystem, args: argparse.Namespace) -> dict[str, Any]:
    d = f"default/bench-{os.getpid()}"
    big, size = f"{d}/big", args.size * MiB
    fs.makedirs(f"{d}/list")
    t = time.perf_counter()
    block = random.Random(1).randbytes(4 * MiB)
    with fs.open(big, "wb") as f:
        for _ in range(size // len(block)):
            f.write(block)
    write_mbs = size / (time.perf_counter() - t) / 1e6
    for i in range(100):
        fs.touch(f"{d}/list/f{i:03d}")
    _read_all(fs, big)  # warms the cache: every later read is a hit
    uri = fs.uri(big)
    rnd = random.Random(2)
    offsets = [rnd.randrange(size // (64 << 10)) * (64 << 10) for _ in range(args.random_reads)]
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}

    def add(name: str, way: str, r: dict[str, float]) -> None:
        rows.setdefault(name, {}).setdefault(way, []).append(r)

    for rnd_i in range(args.rounds):
        add("seq", "go", _go(fs, kind="seq", path=uri, io_size=4 * MiB))
        add("seq", "python readinto", _py(fs, lambda: _read_into(fs, big)))
        add("seq", "python read", _py(fs, lambda: _read_all(fs, big)))
        add("random", "go", _go(fs, kind="random", path=uri, size=64 << 10, offsets=offsets))
        add("random", "python", _py(fs, lambda: _random(fs, big, offsets)))
        add("random", "python cat_ranges", _py(fs, lambda: _ranges(fs, big, offsets)))
        add("noop", "python", _py(fs, lambda: _noop(fs, args.meta_ops)))
        add("stat", "go", _go(fs, kind="stat", path=uri, count=args.meta_ops))
        add("stat", "python", _py(fs, lambda: _stat(fs, big, args.meta_ops)))
        add("list", "go", _go(fs, kind="list", path=fs.uri(f"{d}/list"), count=args.lists))
        add("list", "python", _py(fs, lambda: _list(fs, f"{d}/list", args.lists)))
        cdir = f"{d}/create{rnd_i}"
        fs.makedirs(cdir)
        add("create", "go", _go(fs, kind="create", path=fs.uri(cdir), count=args.meta_ops))
        add("create", "python", _py(fs, functools.partial(_create, fs, cdir, args.meta_ops)))
    fs.rm(d, recursive=True)
    return {"machine": _machine(), "write_mbs": write_mbs, "size": size, "rows": rows}


def _read_all(fs: StrataFileSystem, path: str) -> int:
    n = 0
    with fs.open(path) as f:
        while b := f.read(4 * MiB):
            n += len(b)
    return n


def _read_into(fs: StrataFileSystem, path: str) -> int:
    n, buf = 0, bytearray(4 * MiB)
    with fs.open(path) as f:
        while k := f.readinto(buf):
            n += k
    return n


def _random(fs: StrataFileSystem, path: str, offsets: list[int]) -> int:
    with fs.open(path) as f:
        for off in offsets:
            f.seek(off)
            f.read(64 << 10)
    return len(offsets)


def _ranges(fs: StrataFileSystem, path: str, offsets: list[int]) -> int:
    for i in range(0, len(offsets), 64):
        part = offsets[i:i + 64]
        fs.cat_ranges([path] * len(part), part, [o + (64 << 10) for o in part])
    return len(offsets)


def _noop(fs: StrataFileSystem, n: int) -> int:
    for _ in range(n):
        fs.agent.call({"op": "user"})
    return n


def _stat(fs: StrataFileSystem, path: str, n: int) -> int:
    for _ in range(n):
        fs.info(path)
    return n


def _list(fs: StrataFileSystem, path: str, n: int) -> int:
    return sum(len(fs.ls(path)) for _ in range(n))


def _create(fs: StrataFileSystem, d: str, n: int) -> int:
    for i in range(n):
        fs.pipe_file(f"{d}/p{i}", b"", mode="create")
    return n


def _machine() -> dict[str, Any]:
    load = os.getloadavg()
    ver = subprocess.run([_agent.find_binary(None), "version"], capture_output=True, text=True).stdout.split("\n")[0]
    return {"cores": os.cpu_count(), "load": [round(x, 1) for x in load], "python": platform.python_version(),
            "strata": ver.strip(), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


_UNITS = {"seq": ("MB/s", 1e6), "random": ("reads/s", 1), "noop": ("calls/s", 1), "stat": ("ops/s", 1),
          "list": ("entries/s", 1), "create": ("ops/s", 1)}


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    m = results["machine"]
    print(f"python -m strata.bench: {m['when']}, {m['cores']} cores, load {m['load']}, Python {m['python']}, "
          f"{m['strata']}")
    print(f"file: {results['size'] // MiB} MiB, written through Python at {results['write_mbs']:.0f} MB/s, "
          f"then read once (cached); {args.rounds} rounds: medians, and the best round's rate and ratio "
          "(other load on the machine only ever slows a round)\n")
    print(f"{'measure':<8} {'way':<18} {'rate':>12} {'unit':<10} {'cpu s/op':>10} {'vs go':>7} {'best':>12} "
          f"{'vs go':>7} {'go cpu/cpu':>10}")
    for name, ways in results["rows"].items():
        unit, scale = _UNITS[name]
        go_rate = go_best = go_cpu = None
        for way, rs in ways.items():
            rate = statistics.median(r["n"] / r["seconds"] for r in rs) / scale
            best = max(r["n"] / r["seconds"] for r in rs) / scale
            cpu = statistics.median(r["cpu"] / max(r["n"], 1) for r in rs)
            if name == "seq":
                cpu *= 1e9  # per GB
            if way == "go":
                go_rate, go_best, go_cpu = rate, best, cpu
            ratio = f"{rate / go_rate:.2f}" if go_rate else ""
            best_ratio = f"{best / go_best:.2f}" if go_best else ""
            # What the rate's ratio would be were both bound by their CPU alone, as on an idle
            # machine: other load barely moves a round's CPU time, where it moves its rate.
            cpu_ratio = f"{go_cpu / cpu:.2f}" if go_cpu and cpu else ""
            cpu_unit = f"{cpu:.3f}/GB" if name == "seq" else f"{cpu * 1e6:.0f}us"
            print(f"{name:<8} {way:<18} {rate:>12,.0f} {unit:<10} {cpu_unit:>10} {ratio:>7} {best:>12,.0f} "
                  f"{best_ratio:>7} {cpu_ratio:>10}")
    for way in ("python readinto", "python read"):
        med, best = _ratio(results, "seq", way, statistics.median), _ratio(results, "seq", way, max)
        cpu = _cpu_ratio(results, "seq", way)
        print(f"target: seq {way} >= 0.70 of go: median {_met(med)}, best round {_met(best)}, "
              f"by CPU time {_met(cpu)}")


def _met(r: float) -> str:
    return f"{'met' if r >= 0.70 else 'NOT met'} ({r:.2f})"


def _cpu_ratio(results: dict[str, Any], name: str, way: str) -> float:
    """Go's median CPU time per operation over way's."""
    cpu = {w: statistics.median(r["cpu"] / max(r["n"], 1) for r in rs) for w, rs in results["rows"][name].items()}
    return float(cpu["go"] / cpu[way]) if cpu[way] else 0.0


def _ratio(results: dict[str, Any], name: str, way: str, pick: Callable[[list[float]], float]) -> float:
    """way's rate over Go's, each the pick (median, max) of its rounds."""
    rates = {w: pick([r["n"] / r["seconds"] for r in rs]) for w, rs in results["rows"][name].items()}
    return float(rates[way] / rates["go"])


if __name__ == "__main__":
    sys.exit(main())
