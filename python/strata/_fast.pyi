"""Types of strata._fast, the C extension (_fast.c): copies out of a lent
cache file's mapping with each unit's CRC32C checked in the same pass."""

from typing_extensions import Buffer

def copy(dst: Buffer, src: Buffer, end: int, unit: int, crcs: bytes, off: int, n: int) -> int:
    """Copies src[off:off+n] into dst, each unit it touches checked against
    crcs; -1, or the first bad unit's index. OSError if the mapping faulted."""

def take(src: Buffer, end: int, unit: int, crcs: bytes, off: int, n: int) -> bytes | int:
    """src[off:off+n] as new bytes, each unit checked; or the first bad unit's index."""

def available() -> bool:
    """Whether this machine has the CRC32C instruction."""

def folds(on: bool = ...) -> bool:
    """Whether copies fold (AVX-512 and VPCLMULQDQ); a test turns folding off or on."""
