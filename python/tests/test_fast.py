"""strata._fast, the copy of a lent cache file with each unit's CRC32C checked in the same
pass, against a CRC32C computed here byte by byte: every range, cut anywhere, copies the right
bytes and passes its check; a flipped bit anywhere in a unit it touches fails it, and nothing
of a failed copy is returned. Folding (AVX-512) and the CRC32 chains both."""

from __future__ import annotations

import random
import struct

import pytest

from strata import _fast

UNIT = 64 << 10


def _table() -> list[int]:
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = _table()


def crc32c(b: bytes) -> int:
    c = 0xFFFFFFFF
    for x in b:
        c = TABLE[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


@pytest.fixture(scope="module")
def lent():
    rnd = random.Random(5)
    data = rnd.randbytes(5 * UNIT + 777)  # a short last unit, as a block's may be
    crcs = b"".join(struct.pack("<I", crc32c(data[i:i + UNIT])) for i in range(0, len(data), UNIT))
    return data, crcs


@pytest.fixture(params=[True, False], ids=["fold", "chains"])
def folding(request):
    was = _fast.folds()
    if request.param and not was:
        pytest.fail("this machine has no AVX-512 VPCLMULQDQ: the folding path is not tested here")
    _fast.folds(request.param)
    yield
    _fast.folds(was)


def test_every_range_copies_and_checks(lent, folding):
    assert _fast.available()
    data, crcs = lent
    rnd = random.Random(6)
    ranges = [(0, len(data)), (0, UNIT), (UNIT, 3 * UNIT), (len(data) - 1, 1), (len(data), 0)]
    ranges += [(o, rnd.randrange(len(data) - o + 1)) for o in (rnd.randrange(len(data)) for _ in range(300))]
    for off, n in ranges:
        assert _fast.take(data, len(data), UNIT, crcs, off, n) == data[off:off + n], (off, n)
        dst = bytearray(n)
        assert _fast.copy(dst, data, len(data), UNIT, crcs, off, n) == -1
        assert dst == data[off:off + n], (off, n)


def test_a_flipped_bit_fails_the_units_that_hold_it(lent, folding):
    data, crcs = lent
    for at in (0, UNIT - 1, 2 * UNIT + 12345, len(data) - 1):
        bad = bytearray(data)
        bad[at] ^= 0x10
        bad = bytes(bad)
        u = at // UNIT
        assert _fast.take(bad, len(data), UNIT, crcs, 0, len(data)) == u
        assert _fast.take(bad, len(data), UNIT, crcs, at, 1) == u  # a byte's read checks its whole unit
        if u > 0:  # the units before it are fine
            assert _fast.take(bad, len(data), UNIT, crcs, 0, u * UNIT) == data[:u * UNIT]


def test_bounds_are_refused(lent):
    data, crcs = lent
    for args in ((len(data), UNIT, crcs, 1, len(data)), (len(data) + 1, UNIT, crcs, 0, 1),
                 (len(data), 0, crcs, 0, 1), (len(data), UNIT, crcs[:4], 0, 1), (len(data), UNIT, crcs, -1, 1)):
        with pytest.raises(ValueError):
            _fast.take(data, *args)
    with pytest.raises(ValueError):
        _fast.copy(bytearray(3), data, len(data), UNIT, crcs, 0, 4)
