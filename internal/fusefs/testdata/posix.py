"""Python's os, shutil and mmap (read-only) through a mount: run by
TestPython with the mount point as its argument; prints "ok" at the end,
and fails with an assertion naming what differed."""
import hashlib
import mmap
import os
import shutil
import sys

root = os.path.join(sys.argv[1], "py")
os.makedirs(os.path.join(root, "a", "b"))
data = bytes(range(256)) * 40000 + b"the end"  # about 10 MiB
path = os.path.join(root, "a", "b", "data.bin")
with open(path, "wb") as f:
    f.write(data)
assert os.stat(path).st_size == len(data), os.stat(path)
assert os.path.isdir(os.path.join(root, "a")) and os.path.isfile(path)

# mmap, read-only: the whole file, a search, a slice.
with open(path, "rb") as f:
    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert len(mm) == len(data)
        assert hashlib.sha256(mm[:]).digest() == hashlib.sha256(data).digest()
        assert mm.find(b"the end") == len(data) - 7
        assert mm[1000:1010] == data[1000:1010]

# shutil: a tree copied, moved, its listing walked.
shutil.copytree(os.path.join(root, "a"), os.path.join(root, "c"))
shutil.move(os.path.join(root, "c"), os.path.join(root, "d"))
walked = sorted(os.path.relpath(os.path.join(d, n), root) for d, _, fs in os.walk(root) for n in fs)
assert walked == ["a/b/data.bin", "d/b/data.bin"], walked
with open(os.path.join(root, "d", "b", "data.bin"), "rb") as f:
    assert f.read() == data
shutil.copyfile(path, os.path.join(root, "copy"))
assert [e.name for e in os.scandir(root) if e.is_file()] == ["copy"]

# Writes into the middle, an append, a cut: each read back as a local
# file would be.
with open(path, "r+b") as f:
    f.seek(100)
    f.write(b"XYZ")
expect = data[:100] + b"XYZ" + data[103:]
with open(path, "ab") as f:
    f.write(b"more")
expect += b"more"
with open(path, "rb") as f:
    assert f.read() == expect
os.truncate(path, 1000)
with open(path, "rb") as f:
    assert f.read() == expect[:1000]

os.rename(path, os.path.join(root, "renamed"))
assert not os.path.exists(path)
os.chmod(os.path.join(root, "renamed"), 0o640)
assert os.stat(os.path.join(root, "renamed")).st_mode & 0o777 == 0o640
os.utime(os.path.join(root, "renamed"), (1_000_000, 2_000_000))
assert int(os.stat(os.path.join(root, "renamed")).st_mtime) == 2_000_000
shutil.rmtree(root)
assert not os.path.exists(root)
print("ok")
