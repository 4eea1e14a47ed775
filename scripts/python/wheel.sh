#!/usr/bin/env bash
# make python-wheel: the Python package as a wheel in python/dist, with the strata binary
# (STRATA_BINARY, default bin/strata, which make builds first) bundled as strata/_bin/strata,
# so that pip install of the wheel alone runs the agent (docs/python.md). Prints the wheel's path.
#   PYTHON  the Python whose pip builds it (default: .cache/venv-python's, made by venv.sh)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
binary="${STRATA_BINARY:-$repo/bin/strata}"
[ -x "$binary" ] || { echo "wheel: no strata binary at $binary (make build)" >&2; exit 1; }
python="${PYTHON:-}"
if [ -z "$python" ]; then
  STRATA_VENV="$repo/.cache/venv-python" scripts/spark/venv.sh "$repo/python/requirements-test.txt"
  python="$repo/.cache/venv-python/bin/python"
fi
mkdir -p python/strata/_bin
cp "$binary" python/strata/_bin/strata
rm -rf python/dist python/build
# NB: no build isolation: the venv's pinned setuptools builds it, with nothing downloaded.
"$python" -m pip wheel --disable-pip-version-check -q --no-deps --no-build-isolation -w python/dist ./python >&2
rm -rf python/build python/*.egg-info
ls "$repo"/python/dist/stratafs-*.whl
