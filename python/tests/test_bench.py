"""python -m strata.bench, small, against the test cluster: every row measured by both
ways and reported, the JSON holding each round (its figures are not asserted: they are
timings)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_reports_every_row(cluster, tmp_path):
    out = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, "-m", "strata.bench", "--meta", cluster.meta, "--size", "8",
                          "--rounds", "2", "--random-reads", "20", "--meta-ops", "20", "--lists", "2",
                          "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for measure, way in [("seq", "go"), ("seq", "python readinto"), ("seq", "python read"), ("random", "go"),
                         ("random", "python"), ("random", "python cat_ranges"), ("noop", "python"),
                         ("stat", "go"), ("stat", "python"), ("list", "go"), ("list", "python"),
                         ("create", "go"), ("create", "python")]:
        assert any(line.split()[:len(way.split()) + 1] == [measure, *way.split()] for line in lines), (measure, way)
    assert sum(line.startswith("target: seq python") for line in lines) == 2, run.stdout
    rows = json.loads(out.read_text())["rows"]
    assert all(len(rounds) == 2 and all(r["n"] > 0 and r["seconds"] > 0 for r in rounds)
               for ways in rows.values() for rounds in ways.values())
