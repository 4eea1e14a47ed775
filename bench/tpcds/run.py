"""make bench-tpcds's driver: TPC-DS queries on Spark three ways, against one bandwidth-
limited bucket (scripts/bench-tpcds/run.sh starts MinIO, the proxy, Strata, then this).

    direct  s3a://BUCKET/PREFIX straight to the bucket (Hadoop's S3A), through the proxy
    cold    strata://NS/PREFIX, a cache-mode namespace over the same bucket, through the same
            proxy, right after `strata admin uncache`
    warm    the same after `strata admin load`

Phases:
  1. upload: the Parquet files of --data into the bucket, with S3A straight to MinIO;
  2. select (unless --queries names them): every query once, direct, with no limit; the
     --pick queries that read the most bytes from the bucket per second of run time are
     the IO-heavy set;
  3. for each --bandwidths setting, --rounds rounds of the three ways (direct first in odd
     rounds, last in even ones, so that drift on a shared machine hits both), each way
     running every selected query once; the median of the rounds is reported;
  4. with --all-at BW, every query three ways once at that setting.

Every query's result (row count and a checksum of the rows) must be the same in every run
of every way; a query whose results differ is reported and the run fails.
Output: the report as JSON (--out) and as Markdown tables on standard output.
"""

import argparse
import decimal
import hashlib
import json
import math
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

WAYS = ("direct", "cold", "warm")


def log(*a):
    print("bench-tpcds:", *a, file=sys.stderr, flush=True)


# ---- the environment: proxy, Strata CLI ------------------------------------------------


class Proxy:
    """The HTTP control of `strata bench proxy`."""

    def __init__(self, url):
        self.url = url.rstrip("/")

    def _call(self, method, path):
        req = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def stats(self):
        return self._call("GET", "/stats")

    def set_bandwidth(self, bps):
        return self._call("PUT", f"/bandwidth?bytes-per-sec={bps}")


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
COUNTERS = ("BUCKET-IN", "SC-READ", "RPC-READ", "HITS", "MISSES")


class Strata:
    def __init__(self, binary, meta):
        self.binary, self.meta = binary, meta

    def run(self, *args):
        r = subprocess.run([self.binary, *args, "--meta", self.meta], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"strata {' '.join(args)}: {r.stdout}{r.stderr}")
        return r.stdout

    def counters(self):
        """The workers' counters, summed, in bytes (sizes) or counts."""
        lines = self.run("admin", "workers").splitlines()
        head, total = lines[0].split(), dict.fromkeys(COUNTERS, 0.0)
        for line in lines[1:]:
            for k, v in zip(head, line.split()):
                if k in total:
                    total[k] += parse_count(v)
        return total


def parse_count(s):
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", s)
    if not m or (m.group(2) and m.group(2) not in _UNITS):
        raise ValueError(f"not a number from strata admin workers: {s!r}")
    return float(m.group(1)) * _UNITS.get(m.group(2), 1)


def parse_bytes(s):
    m = re.fullmatch(r"([0-9.]+)\s*(MB|GB|KB|B)?", s)
    if not m:
        raise argparse.ArgumentTypeError(f"not a bandwidth: {s!r} (e.g. 16MB)")
    return float(m.group(1)) * {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, None: 1}[m.group(2)]


# ---- Spark -----------------------------------------------------------------------------


def spark_session(a):
    from pyspark.sql import SparkSession

    s3a = {
        "fs.s3a.endpoint": a.s3a_endpoint,
        "fs.s3a.endpoint.region": "us-east-1",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": a.access_key,
        "fs.s3a.secret.key": a.secret_key,
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }
    b = (SparkSession.builder.master(f"local[{a.cores}]").appName("bench-tpcds")
         .config("spark.driver.memory", a.driver_memory)
         .config("spark.driver.extraClassPath", a.classpath)
         .config("spark.sql.shuffle.partitions", str(a.shuffle_partitions))
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.hadoop.fs.strata.meta.address", a.meta))
    for k, v in s3a.items():
        b = b.config("spark.hadoop." + k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def upload(spark, a, tables):
    """Copies --data's tables into the bucket with S3A straight to MinIO (not through the
    proxy), unless it holds them already (a DONE object, written last)."""
    jvm = spark._jvm
    conf = jvm.org.apache.hadoop.conf.Configuration(spark._jsc.hadoopConfiguration())
    conf.set("fs.s3a.endpoint", a.load_endpoint)
    dst_root = jvm.org.apache.hadoop.fs.Path(f"s3a://{a.bucket}/{a.prefix}")
    fs = jvm.org.apache.hadoop.fs.FileSystem.newInstance(dst_root.toUri(), conf)
    try:
        if fs.exists(jvm.org.apache.hadoop.fs.Path(dst_root, "DONE")):
            return
        local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)
        t0 = time.monotonic()
        for t in tables:
            src = jvm.org.apache.hadoop.fs.Path(f"file://{a.data / t}")
            jvm.org.apache.hadoop.fs.FileUtil.copy(local, src, fs, jvm.org.apache.hadoop.fs.Path(dst_root, t), False, conf)
        fs.create(jvm.org.apache.hadoop.fs.Path(dst_root, "DONE")).close()
        size = sum(f.stat().st_size for f in a.data.rglob("*.parquet"))
        log(f"uploaded {size / 1e6:.0f} MB to s3a://{a.bucket}/{a.prefix} in {time.monotonic() - t0:.0f} s")
    finally:
        fs.close()


def register(spark, base, tables):
    """Temp views of every table under base; returns the seconds it took (the listings)."""
    t0 = time.monotonic()
    for t in tables:
        spark.read.parquet(f"{base}/{t}").createOrReplaceTempView(t)
    return time.monotonic() - t0


def canonical(v):
    """A value as text that is the same whichever way the query ran: floating sums may be
    added in another order, so doubles keep 9 significant digits."""
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.9g}"
    if isinstance(v, decimal.Decimal):
        return str(v.normalize()) if v == v else "nan"
    return repr(v)


def checksum(rows):
    """Row count and a digest of the rows, independent of their order."""
    lines = sorted("|".join(canonical(v) for v in r) for r in rows)
    return len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


class Runner:
    def __init__(self, spark, a, proxy, strata, queries, tables):
        self.spark, self.a, self.proxy, self.strata = spark, a, proxy, strata
        self.queries, self.tables = queries, tables
        self.results = {}  # query -> (rows, digest) first seen
        self.mismatches = []

    def base(self, way):
        return f"s3a://{self.a.bucket}/{self.a.prefix}" if way == "direct" else f"strata://{self.a.ns}/{self.a.prefix}"

    def prepare(self, way):
        """What a way does before its queries, untimed."""
        if way == "cold":
            self.strata.run("admin", "uncache", self.base(way))
        elif way == "warm":
            self.strata.run("admin", "load", self.base(way))

    def run_way(self, way, names, label):
        self.prepare(way)
        list_s = register(self.spark, self.base(way), self.tables)
        p0, c0 = self.proxy.stats(), self.strata.counters()
        per_query = {}
        for q in names:
            b0 = self.proxy.stats()["down_bytes"]
            t0 = time.monotonic()
            try:
                rows = self.spark.sql(self.queries[q]).collect()
            except Exception as e:  # noqa: BLE001 - a query Spark cannot run is reported, not fatal
                first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
                per_query[q] = {"error": first[:200]}
                log(f"{label} {way} {q}: {per_query[q]['error']}")
                continue
            secs = time.monotonic() - t0
            got = checksum(rows)
            self.check(q, got, f"{label} {way}")
            per_query[q] = {"secs": secs, "bucket_bytes": self.proxy.stats()["down_bytes"] - b0,
                            "rows": got[0], "digest": got[1]}
        p1, c1 = self.proxy.stats(), self.strata.counters()
        ok = [v["secs"] for v in per_query.values() if "secs" in v]
        log(f"{label} {way}: {len(ok)} queries in {sum(ok):.1f} s, "
            f"{(p1['down_bytes'] - p0['down_bytes']) / 1e6:.0f} MB from the bucket")
        return {"queries": per_query, "list_secs": list_s,
                "bucket_bytes": p1["down_bytes"] - p0["down_bytes"],
                "workers": {k: c1[k] - c0[k] for k in COUNTERS}}

    def check(self, q, got, where):
        want = self.results.setdefault(q, got)
        if got != want:
            self.mismatches.append({"query": q, "where": where, "want": want, "got": got})
            log(f"RESULT MISMATCH {q} in {where}: {got} (first run: {want})")


def requested_bytes(path, columns):
    """What a reader of columns of the Parquet file at path asks for: their column chunks
    and the footer (its length, the length's 4 bytes and the magic), from the file's
    metadata (DuckDB's parquet_metadata)."""
    import duckdb

    con = duckdb.connect()
    chunks = con.execute("select path_in_schema, total_compressed_size from parquet_metadata(?)",
                         [str(path)]).fetchall()
    size = path.stat().st_size
    with path.open("rb") as f:
        f.seek(size - 8)
        footer = int.from_bytes(f.read(4), "little") + 8
    return sum(n for c, n in chunks if c in columns) + footer


def projection(runner, table, columns):
    """Issue 42's check: the largest Parquet file of table read by a projection of columns,
    once by S3A and once cold through Strata, unlimited; the bytes each takes from the bucket
    (the proxy's count) against what the reader asks for (requested_bytes). Strata must take
    at most 1.1x that."""
    a = runner.a
    files = sorted((a.data / table).rglob("*.parquet"), key=lambda p: p.stat().st_size)
    path = files[-1]
    rel = path.relative_to(a.data).as_posix()
    want = requested_bytes(path, columns)
    runner.proxy.set_bandwidth(0)
    out = {"file": rel, "size": path.stat().st_size, "columns": columns, "requested": want}
    for way in ("direct", "cold"):
        uri = f"{runner.base(way)}/{rel}"
        if way == "cold":
            runner.strata.run("admin", "uncache", uri)
        b0 = runner.proxy.stats()["down_bytes"]
        runner.spark.read.parquet(uri).selectExpr(*[f"sum(hash({c}))" for c in columns]).collect()
        out[way] = runner.proxy.stats()["down_bytes"] - b0
    log(f"projection of {columns} of {rel}: requested {want}, s3a {out['direct']}, strata cold {out['cold']}")
    return out


def projection_table(p):
    ratio = {w: p[w] / p["requested"] for w in ("direct", "cold")}
    return "\n".join([
        f"Projection: {', '.join(p['columns'])} of {p['file']} ({p['size'] / 1e6:.1f} MB) by Spark "
        f"(a sum of each column's hashes), no limit; requested: the column chunks and the footer once",
        "", "| way | bytes from the bucket (proxy) | / requested |", "| --- | ---: | ---: |",
        f"| requested | {p['requested']:,} | 1.00 |",
        f"| direct (s3a) | {p['direct']:,} | {ratio['direct']:.2f} |",
        f"| cold strata:// | {p['cold']:,} | {ratio['cold']:.2f} |"])


def select(runner, names, pick):
    """Every query once, direct, unlimited: the pick with the most bucket bytes per second."""
    runner.proxy.set_bandwidth(0)
    r = runner.run_way("direct", names, "select")
    rate = {q: v["bucket_bytes"] / v["secs"] for q, v in r["queries"].items() if "secs" in v}
    chosen = sorted(rate, key=lambda q: -rate[q])[:pick]
    return sorted(chosen), r, rate


def bench(runner, names, bandwidths, rounds):
    out = []
    for bw in bandwidths:
        runner.proxy.set_bandwidth(bw)
        setting = {"bandwidth": bw, "rounds": []}
        for r in range(rounds):
            order = WAYS if r % 2 == 0 else ("cold", "warm", "direct")
            label = f"{bw / 1e6:g}MB/s round {r + 1}"
            setting["rounds"].append({way: runner.run_way(way, names, label) for way in order})
        out.append(setting)
    return out


# ---- the report ------------------------------------------------------------------------


def median_secs(setting, way, q):
    xs = [rd[way]["queries"][q]["secs"] for rd in setting["rounds"] if "secs" in rd[way]["queries"].get(q, {})]
    return statistics.median(xs) if xs else None


def table(setting, names):
    bw = setting["bandwidth"]
    lines = [f"#### {bw / 1e6:g} MB/s each way ({len(setting['rounds'])} rounds, medians)", "",
             "| query | direct s | cold s | warm s | warm speed-up | cold / direct |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    tot = dict.fromkeys(WAYS, 0.0)
    logs = dict.fromkeys(WAYS, 0.0)
    n = 0
    for q in names:
        m = {w: median_secs(setting, w, q) for w in WAYS}
        if None in m.values():
            lines.append(f"| {q} | failed | | | | |")
            continue
        n += 1
        for w in WAYS:
            tot[w] += m[w]
            logs[w] += math.log(m[w])
        lines.append(f"| {q} | {m['direct']:.2f} | {m['cold']:.2f} | {m['warm']:.2f} | "
                     f"{m['direct'] / m['warm']:.2f}× | {m['cold'] / m['direct']:.2f} |")
    if n:
        geo = {w: math.exp(logs[w] / n) for w in WAYS}
        lines.append(f"| **total** | **{tot['direct']:.1f}** | **{tot['cold']:.1f}** | **{tot['warm']:.1f}** | "
                     f"**{tot['direct'] / tot['warm']:.2f}×** | **{tot['cold'] / tot['direct']:.2f}** |")
        lines.append(f"| geometric mean | {geo['direct']:.2f} | {geo['cold']:.2f} | {geo['warm']:.2f} | "
                     f"{geo['direct'] / geo['warm']:.2f}× | {geo['cold'] / geo['direct']:.2f} |")
    lines += ["", "| per run (median of rounds) | direct | cold | warm |", "| --- | ---: | ---: | ---: |"]

    def med(f):
        return {w: statistics.median(f(rd[w]) for rd in setting["rounds"]) for w in WAYS}

    rows = [("MB from the bucket (proxy)", med(lambda x: x["bucket_bytes"] / 1e6)),
            ("workers: MB from the bucket", med(lambda x: x["workers"]["BUCKET-IN"] / 1e6)),
            ("workers: MB lent short-circuit", med(lambda x: x["workers"]["SC-READ"] / 1e6)),
            ("workers: MB over RPC", med(lambda x: x["workers"]["RPC-READ"] / 1e6)),
            ("listing the tables, s", med(lambda x: x["list_secs"]))]
    for name, v in rows:
        lines.append(f"| {name} | {v['direct']:.1f} | {v['cold']:.1f} | {v['warm']:.1f} |")
    return "\n".join(lines)


def selection_table(sel, names):
    """The selection pass: the queries by bytes read from the bucket per second, the chosen
    ones and the next four."""
    ok = {q: v for q, v in sel["queries"].items() if "secs" in v}
    ranked = sorted(ok, key=lambda q: -ok[q]["bucket_bytes"] / ok[q]["secs"])
    failed = sorted(q for q, v in sel["queries"].items() if "error" in v)
    lines = [f"Selection: each query once, s3a:// direct, no limit ({len(ok)} ran"
             + (f"; Spark could not run {', '.join(failed)}" if failed else "") + ")", "",
             "| rank | query | MB from the bucket | s | MB/s | chosen |", "| ---: | --- | ---: | ---: | ---: | --- |"]
    for i, q in enumerate(ranked[:len(names) + 4]):
        v = ok[q]
        lines.append(f"| {i + 1} | {q} | {v['bucket_bytes'] / 1e6:.1f} | {v['secs']:.2f} | "
                     f"{v['bucket_bytes'] / 1e6 / v['secs']:.1f} | {'yes' if q in names else ''} |")
    total_s = sum(v["secs"] for v in ok.values())
    lines.append(f"\nAll {len(ok)} queries: {total_s:.0f} s, "
                 f"{sum(v['bucket_bytes'] for v in ok.values()) / 1e6:.0f} MB from the bucket.")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="gen.py's output directory")
    ap.add_argument("--meta", required=True)
    ap.add_argument("--strata", required=True, help="the strata binary")
    ap.add_argument("--ns", default="tpcds", help="the cache-mode namespace over the bucket, through the proxy")
    ap.add_argument("--bucket", default="tpcds")
    ap.add_argument("--prefix", default="sf1")
    ap.add_argument("--s3a-endpoint", required=True, help="the proxy")
    ap.add_argument("--load-endpoint", required=True, help="MinIO itself, for the upload")
    ap.add_argument("--access-key", required=True)
    ap.add_argument("--secret-key", required=True)
    ap.add_argument("--control", required=True, help="the proxy's HTTP control")
    ap.add_argument("--classpath", required=True, help="the Strata jar and S3A's jars")
    ap.add_argument("--bandwidths", type=lambda s: [parse_bytes(x) for x in s.split(",")], default="8MB,40MB")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", default="", help="comma list (q03,q07); empty: select --pick of all")
    ap.add_argument("--pick", type=int, default=8)
    ap.add_argument("--all-at", type=parse_bytes, default=None, help="also run every query three ways once at this bandwidth")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--projection", default="store_sales:ss_net_paid,ss_quantity",
                    help="TABLE:COL,COL: check the bytes a projection takes cold (empty: no check)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()

    queries = {p.stem: p.read_text() for p in sorted((a.data / "queries").glob("q*.sql"))}
    tables = sorted(p.name for p in a.data.iterdir() if p.is_dir() and p.name != "queries")
    spark = spark_session(a)
    proxy, strata = Proxy(a.control), Strata(a.strata, a.meta)
    upload(spark, a, tables)
    runner = Runner(spark, a, proxy, strata, queries, tables)
    report = {"args": {k: str(v) for k, v in vars(a).items()}, "tables": tables}
    if a.projection:
        ptable, pcols = a.projection.split(":")
        report["projection"] = projection(runner, ptable, pcols.split(","))
    if a.queries:
        names = a.queries.split(",")
    else:
        names, report["select"], rate = select(runner, list(queries), a.pick)
        report["select_rate"] = rate
        log("IO-heavy queries: " + ", ".join(f"{q} ({rate[q] / 1e6:.0f} MB/s)" for q in names))
    report["queries"] = names
    report["settings"] = bench(runner, names, a.bandwidths, a.rounds)
    if a.all_at is not None:
        ok = [q for q in queries if "error" not in report.get("select", {}).get("queries", {}).get(q, {})]
        report["all"] = bench(runner, ok, [a.all_at], 1)
    report["mismatches"] = runner.mismatches
    a.out.write_text(json.dumps(report, indent=1))
    print(f"IO-heavy queries: {', '.join(names)}\n")
    over = False
    if "projection" in report:
        print(projection_table(report["projection"]) + "\n")
        over = report["projection"]["cold"] > 1.1 * report["projection"]["requested"]
    if "select" in report:
        print(selection_table(report["select"], names) + "\n")
    for s in report["settings"]:
        print(table(s, names) + "\n")
    for s in report.get("all", []):
        print("All queries:\n\n" + table(s, [q for q in queries if q in s["rounds"][0]["direct"]["queries"]]) + "\n")
    if runner.mismatches:
        print(f"RESULTS DIFFER in {len(runner.mismatches)} runs: {runner.mismatches}")
        sys.exit(1)
    print("Results: every query gave the same rows (count and checksum) in every run of every way.")
    spark.stop()
    if over:
        print("PROJECTION: Strata took more than 1.1x the requested bytes from the bucket")
        sys.exit(1)


if __name__ == "__main__":
    main()
