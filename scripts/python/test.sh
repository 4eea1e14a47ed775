#!/usr/bin/env bash
# make test-python: the Python package's tests (python/tests) against a real `strata server --dev`
# and MinIO, run by pytest from the virtual environment .cache/venv-python, into which the
# package is installed from its wheel (make python-wheel), as a user installs it. See
# docs/python.md, "Tests".
#   STRATA_BINARY  the strata binary (default bin/strata)
#   STRATA_MINIO   the MinIO binary (default .cache/bin/minio)
# Extra arguments go to pytest (e.g. -k fork).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
venv="$repo/.cache/venv-python"

STRATA_VENV="$venv" scripts/spark/venv.sh "$repo/python/requirements-test.txt"
wheel=$(PYTHON="$venv/bin/python" scripts/python/wheel.sh)
"$venv/bin/pip" install --disable-pip-version-check -q --no-deps --force-reinstall "$wheel"
export STRATA_BINARY="${STRATA_BINARY:-$repo/bin/strata}"
export STRATA_MINIO="${STRATA_MINIO:-$repo/.cache/bin/minio}"
# NB: from python/, but the tests import the package installed in the venv, not the source
# tree: the pytest script (unlike python -m pytest) puts no working directory on sys.path, nor
# does --import-mode=importlib the tests' directory; -p no:cacheprovider writes nothing there.
cd "$repo/python"
set +e
"$venv/bin/pytest" -p no:cacheprovider --import-mode=importlib -v "$@" tests
status=$?
set -e
case $status in
  0) ;;
  1) echo "test-python: some tests failed" >&2 ;;
  2) echo "test-python: pytest was interrupted" >&2 ;;
  3) echo "test-python: pytest failed inside (an internal error)" >&2 ;;
  4) echo "test-python: pytest was called wrongly (a usage error)" >&2 ;;
  5) echo "test-python: pytest collected no test: that is a failure here" >&2 ;;
  *) echo "test-python: pytest exited with status $status" >&2 ;;
esac
exit $status
