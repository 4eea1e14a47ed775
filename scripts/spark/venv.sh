#!/usr/bin/env bash
# Installs the Python packages of the Spark test (and, with extra requirement files, of
# make bench-tpcds) into one virtual environment in the checkout, .cache/venv, at the exact
# versions the files pin. A second run with nothing new to install is a no-op: each file's
# content is stamped after a successful install.
#
# Usage: scripts/spark/venv.sh [REQUIREMENTS...]   (default: scripts/spark/requirements.txt)
#   env STRATA_VENV overrides the directory; prints nothing but progress on stderr.
# The first install downloads pyspark (about 450 MB, Spark's jars included) and builds its
# wheel: about 2 minutes here.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${STRATA_VENV:-$repo/.cache/venv}"
[ $# -gt 0 ] || set -- "$repo/scripts/spark/requirements.txt"

[[ -f "$repo/.cache/.gitignore" ]] || { mkdir -p "$repo/.cache" && echo '*' >"$repo/.cache/.gitignore"; }
if [ ! -x "$venv/bin/python" ]; then
  echo "venv: creating $venv" >&2
  python3 -m venv "$venv"
fi
for req in "$@"; do
  stamp="$venv/.installed-$(basename "$(dirname "$req")")-$(basename "$req")"
  if [ -f "$stamp" ] && cmp -s "$stamp" "$req"; then
    continue
  fi
  echo "venv: installing $req into $venv" >&2
  "$venv/bin/pip" install --disable-pip-version-check -q -r "$req" >&2
  cp "$req" "$stamp"
done
