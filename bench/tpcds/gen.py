"""Generates TPC-DS data as Parquet with DuckDB's TPC-DS extension (dsdgen, offline), and
writes the 99 queries beside it: make bench-tpcds's first step (scripts/bench-tpcds/run.sh).

    python gen.py --scale 1 --out DIR

DIR/<table>/part-NNNN.parquet for each of the 24 tables (the large ones cut into files of
about --file-size bytes, so that Spark reads them as several splits and the bucket holds
many objects, as a lake's tables are), DIR/queries/qNN.sql, and DIR/DONE when all of it is
there: a second run with the same scale finds DONE and does nothing.
"""

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import duckdb
import duckdb_extension_tpcds


def extension_path():
    """The extension file the duckdb-extension-tpcds wheel ships (loaded by path: nothing is
    downloaded)."""
    base = Path(duckdb_extension_tpcds.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    path = base / "tpcds.duckdb_extension"
    if not path.is_file():
        sys.exit(f"gen.py: no {path}: duckdb-extension-tpcds must be duckdb's version ({duckdb.__version__})")
    return path


def connect():
    con = duckdb.connect()
    con.execute(f"LOAD '{extension_path()}'")
    return con


def generate(scale, out, file_size, threads):
    done = out / "DONE"
    if done.is_file() and done.read_text().strip() == f"sf={scale}":
        print(f"gen.py: {out} has TPC-DS at scale {scale} already", file=sys.stderr)
        return
    if out.exists():
        shutil.rmtree(out)
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    con = connect()
    con.execute(f"SET threads = {threads}")
    t0 = time.monotonic()
    con.execute(f"CALL dsdgen(sf = {scale})")
    print(f"gen.py: dsdgen sf={scale} in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
    for t in tables:
        (tmp / t).mkdir()
        con.execute(f"COPY {t} TO '{tmp / t}' (FORMAT parquet, COMPRESSION snappy, "
                    f"FILE_SIZE_BYTES '{file_size}', FILENAME_PATTERN 'part-{{i}}', OVERWRITE_OR_IGNORE)")
    (tmp / "queries").mkdir()
    for nr, q in con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY 1").fetchall():
        (tmp / "queries" / f"q{nr:02d}.sql").write_text(q)
    (tmp / "DONE").write_text(f"sf={scale}\n")
    tmp.rename(out)
    size = sum(f.stat().st_size for f in out.rglob("*.parquet"))
    print(f"gen.py: {len(tables)} tables, {size / 1e6:.0f} MB of Parquet in {out} "
          f"({time.monotonic() - t0:.0f} s)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--file-size", default="32MB", help="target size of one Parquet file")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    scale = int(a.scale) if a.scale == int(a.scale) else a.scale
    generate(scale, a.out, a.file_size, a.threads)


if __name__ == "__main__":
    main()
