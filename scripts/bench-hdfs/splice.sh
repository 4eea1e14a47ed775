#!/usr/bin/env bash
# splice.sh DOC TABLE COMMAND MACHINE COMMIT [NAME]: replaces what stands between the NAME markers
# (bench-hdfs unless given) in DOC (appending markers and section at the end if DOC has none) with
# the section made of the table file, the command that produced it, the machine and the commit.
# Used by run.sh here and by scripts/bench-hbase/run.sh.
set -euo pipefail
doc=$1 table=$2 command=$3 machine=$4 commit=$5 name=${6:-bench-hdfs}
begin="<!-- $name:begin (written by make $name; edits up to the end marker are lost on the next run) -->"
end="<!-- $name:end -->"

section=$(mktemp)
trap 'rm -f "$section" "$section.doc"' EXIT
{
  echo "$begin"
  echo
  echo '```'
  echo "$command"
  echo '```'
  echo
  echo "$(date -u +%Y-%m-%d), commit $commit. Machine: $machine."
  echo
  echo '```'
  cat "$table"
  echo '```'
  echo
  echo "$end"
} >"$section"

if grep -qF "<!-- $name:begin" "$doc" && grep -qF "$end" "$doc"; then
  awk -v sec="$section" -v b="<!-- $name:begin" -v e="$end" '
    index($0, b) == 1 { while ((getline l < sec) > 0) print l; skip = 1; next }
    skip && index($0, e) == 1 { skip = 0; next }
    !skip { print }
  ' "$doc" >"$section.doc"
else
  { cat "$doc"; echo; cat "$section"; } >"$section.doc"
fi
cat "$section.doc" >"$doc"
