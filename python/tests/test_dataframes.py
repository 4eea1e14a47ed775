"""The Python data stack on strata://: a partitioned Parquet dataset written by PyArrow's
write_dataset and read back equal (block mode and cache mode); pandas round trips (Parquet
and CSV, through storage options); Polars and DuckDB reading the same dataset."""

from __future__ import annotations

import fsspec
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

ROWS = 60_000


def table(rows: int = ROWS, salt: int = 0) -> pa.Table:
    """Deterministic, partitioned by p, a column of each kind; strings incompressible enough
    that the files are not tiny."""
    rng = np.random.default_rng(salt)
    ids = np.arange(rows, dtype=np.int64)
    return pa.table({
        "id": ids,
        "p": (ids + salt) % 5,
        "x": rng.integers(0, 100_003, rows, dtype=np.int32),
        "d": ids * 0.25,
        "s": pa.array([f"{v:032x}" for v in rng.integers(0, 2**62, rows)]),
    })


def sorted_by_id(t: pa.Table) -> pa.Table:
    return t.select(["id", "p", "x", "d", "s"]).sort_by("id")


@pytest.mark.parametrize("ns", ["default", "lake"])
def test_pyarrow_partitioned_dataset_roundtrip(fs, ns):
    root = f"{ns}/warehouse/events"
    src = table()
    ds.write_dataset(src, root, filesystem=fs, format="parquet", partitioning=["p"],
                     partitioning_flavor="hive", max_rows_per_file=20_000, max_rows_per_group=5_000,
                     existing_data_behavior="delete_matching")
    files = fs.find(root)
    assert {f.split("/")[3] for f in files} == {f"p={v}" for v in range(5)}, files
    assert all(f.endswith(".parquet") for f in files), files

    got = ds.dataset(root, filesystem=fs, format="parquet", partitioning="hive").to_table()
    got = got.set_column(got.schema.get_field_index("p"), "p", got["p"].cast(pa.int64()))
    assert sorted_by_id(got).equals(sorted_by_id(src))

    # Predicates and projections push down into ranged reads of the footers and column chunks.
    part = ds.dataset(root, filesystem=fs, format="parquet", partitioning="hive").to_table(
        columns=["id", "s"], filter=(ds.field("p") == 3) & (ds.field("x") < 5000))
    want = src.filter(pa.compute.and_(pa.compute.equal(src["p"], 3), pa.compute.less(src["x"], 5000)))
    assert part.sort_by("id").equals(want.select(["id", "s"]).sort_by("id"))


def test_pandas_roundtrip(cluster, fs, base):
    df = table(20_000, salt=1).to_pandas()
    uri = f"strata://{base}/frame.parquet"
    opts = {"meta": cluster.meta, "token_file": str(cluster.token_file), "plaintext": True}
    df.to_parquet(uri, storage_options=opts)
    pd.testing.assert_frame_equal(pd.read_parquet(uri, storage_options=opts), df)
    df.to_csv(f"strata://{base}/frame.csv", index=False)  # the environment's configuration
    pd.testing.assert_frame_equal(pd.read_csv(f"strata://{base}/frame.csv", dtype=df.dtypes.to_dict()), df)
    with fsspec.open(f"strata://{base}/frame.parquet") as f:
        assert pq.ParquetFile(f).metadata.num_rows == len(df)


@pytest.fixture(scope="module")
def shared_dataset(cluster, fs):
    """One dataset that Polars and DuckDB both read."""
    root = "default/shared/ds"
    src = table(30_000, salt=2)
    ds.write_dataset(src, root, filesystem=fs, format="parquet", partitioning=["p"],
                     partitioning_flavor="hive", existing_data_behavior="delete_matching")
    return root, src


def test_polars_reads_the_dataset(fs, shared_dataset):
    """Polars' own readers know only its built-in schemes: it reads strata:// through a
    PyArrow dataset (lazily, filters pushed down) or from the file objects fsspec opens."""
    import polars as pl

    root, src = shared_dataset
    lazy = pl.scan_pyarrow_dataset(ds.dataset(root, filesystem=fs, format="parquet", partitioning="hive"))
    got = lazy.collect()
    assert got.height == src.num_rows
    assert got["id"].sum() == pa.compute.sum(src["id"]).as_py()
    assert sorted(got["s"].to_list()) == sorted(src["s"].to_pylist())
    assert lazy.filter(pl.col("p") == 2).select(pl.len()).collect().item() == \
        pa.compute.sum(pa.compute.equal(src["p"], 2)).as_py()
    one = fs.find(root)[0]
    with fs.open(one) as f:
        assert pl.read_parquet(f).height == pq.read_metadata(fs.open(one)).num_rows


def test_duckdb_reads_the_dataset(fs, shared_dataset):
    import duckdb

    root, src = shared_dataset
    con = duckdb.connect()
    con.register_filesystem(fs)
    [(n, total, px)] = con.execute(f"SELECT count(*), sum(id), sum(x) FILTER (WHERE p = 4) FROM "
                           f"read_parquet('strata://{root}/**/*.parquet', hive_partitioning = true)").fetchall()
    assert n == src.num_rows
    assert total == pa.compute.sum(src["id"]).as_py()
    want = pa.compute.sum(src.filter(pa.compute.equal(src["p"], 4))["x"]).as_py()
    assert px == want
