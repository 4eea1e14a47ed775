"""Strata for Python: an fsspec file system for ``strata://`` URLs.

Installed, it is fsspec's ``strata`` protocol (through the ``fsspec.specs``
entry point), so pandas, PyArrow, Polars, DuckDB, Dask and data loaders read
and write ``strata://namespace/path``. It talks to Strata through the Go
client, run by a ``strata agent`` process it starts (docs/python.md).
"""

from .core import StrataFileSystem

__all__ = ["StrataFileSystem"]
__version__ = "0.1.0"
