"""The agent's wire as the Go side writes it down (internal/agent/testdata/frames.txt, which
Go's TestFrames checks too): this package encodes the requests byte for byte so, and decodes
the answers into their fields and exceptions."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata._wire import decode, encode

FRAMES = Path(__file__).resolve().parents[2] / "internal/agent/testdata/frames.txt"


def frames() -> dict[str, bytes]:
    out = {}
    for line in FRAMES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, hx = line.split(": ", 1)
            out[name] = bytes.fromhex(hx)
    return out


REQUESTS = {
    "request-hello": {"op": "hello", "version": 1},
    "request-stat": {"op": "stat", "path": "strata://default/a/b"},
    "request-read": {"op": "read", "h": 7, "off": 4 << 20, "len": 64 << 10, "shm": 0, "seq": True},
}


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_requests_are_encoded_as_the_agent_reads_them(name):
    assert encode(REQUESTS[name]) == frames()[name]


def body(frame: bytes) -> bytes:
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    return frame[4:]


def test_answers_are_decoded():
    f = frames()
    st = decode(body(f["answer-stat"]))["status"]
    assert st == {"path": "/a/b", "dir": False, "size": 5, "perm": 0o644, "owner": "alice", "group": "staff",
                  "mtime": 1795919384116, "atime": 1795919384116, "repl": 1, "bsize": 64 << 20, "ino": 42}
    with pytest.raises(FileNotFoundError, match="stat /a/b: no such file"):
        decode(body(f["answer-not-found"]))
    with pytest.raises(ConnectionError, match="127.0.0.1:1: connection refused"):
        decode(body(f["answer-unavailable"]))
