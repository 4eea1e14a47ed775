"""Fork safety, as a PyTorch-style data loader needs it: a parent opens a file, then
multiprocessing children started by fork each read from Strata, through the file they
inherited and through files of their own; the agent outlives the parent while a child lives,
and exits with the last process of the tree."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import textwrap
import time

import fsspec
import pytest

DATA = os.urandom(9 << 20)


def _child_reads(args):
    """In a forked child: ranges through the parent's open file, a file of its own, a
    listing and a write."""
    f, fs, base, i = args
    out = []
    for off in (i * 4096, (1 << 20) + i, len(DATA) - 100):
        f.seek(off)
        out.append(f.read(5000) == DATA[off:off + 5000])
    out.append(fs.cat_file(f"{base}/data", 1000 * i, 1000 * i + 777) == DATA[1000 * i:1000 * i + 777])
    fs.pipe(f"{base}/child-{i}", str(os.getpid()).encode())
    out.append(f"{base}/data" in fs.ls(base, detail=False))
    return all(out), os.getpid()


def test_forked_children_read_the_parents_open_file(fs, base):
    fs.pipe(f"{base}/data", DATA)
    f = fs.open(f"{base}/data")
    assert f.read(1000) == DATA[:1000]  # the parent has read, and holds connections
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        results = pool.map(_child_reads, [(f, fs, base, i) for i in range(8)])
    assert all(ok for ok, _ in results), results
    assert len({pid for _, pid in results}) > 1
    # The parent goes on with its file, and sees what the children wrote.
    f.seek(5 << 20)
    assert f.read(100) == DATA[5 << 20:(5 << 20) + 100]
    f.close()
    assert sorted(p.rsplit("/", 1)[1] for p in fs.ls(base, detail=False) if "child-" in p) == \
        sorted(f"child-{i}" for i in range(8))


def test_a_writer_stays_with_the_process_that_opened_it(fs, base):
    w = fs.open(f"{base}/w", "wb")
    w.write(b"parent")
    pid = os.fork()
    if pid == 0:  # the child: the parent's writer is not its own
        code = 1
        try:
            w.write(b"child")
        except OSError as e:
            code = 0 if "forked child" in str(e) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    w.close()
    assert fs.cat(f"{base}/w") == b"parent"


AGENT_LIFE = """
import os, sys, time, fsspec
fs = fsspec.filesystem("strata")
fs.ls("default")
agent = fs.agent._socket
print(agent, flush=True)
if os.fork() == 0:
    sys.stdin.readline()          # the child lives until the test says
    fs.pipe("default/agent-life-child", b"x")   # the agent still serves it, its parent gone
    print("child wrote", flush=True)
    os._exit(0)
os._exit(0)                       # the parent exits at once
"""


def test_the_agent_lives_as_long_as_its_process_tree(cluster, fs, tmp_path):
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(AGENT_LIFE)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    sock = p.stdout.readline().strip()
    p.wait(timeout=30)  # the parent is gone; its child waits on the pipe
    assert os.path.exists(sock)
    p.stdin.write("go\n")
    p.stdin.flush()
    assert p.stdout.readline().strip() == "child wrote"
    p.stdin.close()
    assert fs.cat("default/agent-life-child") == b"x"
    deadline = time.monotonic() + 30
    while os.path.exists(sock):  # the last of the tree exited: the agent follows
        if time.monotonic() > deadline:
            pytest.fail(f"the agent at {sock} outlived its process tree")
        time.sleep(0.05)


def test_a_killed_agent_is_started_again(cluster, base):
    """The agent killed (-9: its socket stays behind, refusing): the next call starts another;
    a file open in the old one says it is gone."""
    import signal

    from strata import _agent

    fs = fsspec.filesystem("strata", skip_instance_cache=True, timeout="5s")
    fs.pipe(f"{base}/k", b"before")
    f = fs.open(f"{base}/k")
    old = fs.agent._socket
    proc = next(p for p, _, d in _agent._children if old.startswith(d))
    for c in list(fs.agent._idle):  # the pooled connections of the dead agent
        c.close()
    fs.agent._idle.clear()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert os.path.exists(old)  # killed: it removed nothing
    assert fs.cat(f"{base}/k") == b"before"
    assert fs.agent._socket != old
    with pytest.raises(OSError, match="agent it was opened in exited"):
        f.read()
