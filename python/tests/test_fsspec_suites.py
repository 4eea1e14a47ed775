"""fsspec's own shared test suites (fsspec.tests.abstract: copy, get, put, open, pipe),
run against strata:// in the block-mode namespace `default` and in the cache-mode namespace
`lake` (MinIO). Every case runs; none is excluded."""

from __future__ import annotations

import posixpath
import uuid

import fsspec
import pytest
from fsspec.tests.abstract import (
    AbstractCopyTests,
    AbstractFixtures,
    AbstractGetTests,
    AbstractOpenTests,
    AbstractPipeTests,
    AbstractPutTests,
)


class StrataFixtures(AbstractFixtures):
    @pytest.fixture
    def fs(self, cluster):
        return fsspec.filesystem("strata")

    @pytest.fixture(params=["default", "lake"])
    def fs_path(self, request, fs):
        path = f"{request.param}/fsspec-{uuid.uuid4().hex[:12]}"
        yield path
        if fs.exists(path):
            fs.rm(path, recursive=True)

    @pytest.fixture
    def fs_join(self):
        return posixpath.join


class TestStrataCopy(AbstractCopyTests, StrataFixtures):
    pass


class TestStrataGet(AbstractGetTests, StrataFixtures):
    pass


class TestStrataPut(AbstractPutTests, StrataFixtures):
    pass


class TestStrataOpen(AbstractOpenTests, StrataFixtures):
    pass


class TestStrataPipe(AbstractPipeTests, StrataFixtures):
    pass
