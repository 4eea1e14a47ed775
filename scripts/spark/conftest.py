"""Fixtures of the Spark test (scripts/spark/test.sh runs it; docs/java.md, "Spark").

A real cluster on loopback for the whole session: MinIO (STRATA_MINIO, the bucket `lake`),
`strata server --dev` (STRATA_BINARY: a namespace service and a worker on this host, so reads
go short-circuit), the block-mode namespace `default`, and two cache-mode namespaces over the
same prefix of the bucket: `lake`, which Spark writes through, and `lakeview`, a view that
trusts nothing (sync interval 0), to see what the bucket itself holds. One SparkSession in
local mode loads the shaded jar (STRATA_JAR) the way a user passes it, `spark.jars` (what
`--jars` sets) with the one setting docs/java.md gives for it.
"""

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ACCESS_KEY, SECRET_KEY = "strata-test", "strata-test-secret"
START_TIMEOUT = 60  # seconds for a server to come up on a busy 2-core machine
BLOCK_SIZE = "1m"  # so that the test's files span several blocks


def required_file(env, default, hint):
    path = Path(os.environ.get(env) or default)
    if not path.is_file():
        pytest.fail(f"{env}: no file at {path}: {hint}", pytrace=False)
    return path


def shaded_jar():
    if os.environ.get("STRATA_JAR"):
        return required_file("STRATA_JAR", "", "")
    jars = sorted((REPO / "java/hadoop/target").glob("strata-hadoop-*-shaded.jar"))
    if not jars:
        pytest.fail("no shaded jar in java/hadoop/target: run 'make java'", pytrace=False)
    return jars[-1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env():
    """The environment of the servers: MinIO's credentials, and no way to the cloud's
    instance metadata for the AWS SDK to try."""
    env = dict(os.environ)
    env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY,
               AWS_EC2_METADATA_DISABLED="true", AWS_REGION="us-east-1")
    return env


class Processes:
    """Processes started by the test, each in a session of its own, stopped at the end."""

    def __init__(self):
        self.procs = []

    def start(self, args, log, env):
        with open(log, "wb") as out:
            p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env, start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def wait_for_line(proc, log, pattern):
    """Polls log until a line matches pattern (returns the match) or proc exits or the
    start timeout passes."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        m = re.search(pattern, Path(log).read_text(errors="replace"), re.M)
        if m:
            return m
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"{log}: no line matching {pattern!r} (exit status {proc.poll()}):\n"
                + Path(log).read_text(errors="replace")[-3000:], pytrace=False)


def wait_live(proc, log, url):
    """Polls url until it answers 200, or proc exits, or the start timeout passes."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    pytest.fail(f"{url} not live (exit status {proc.poll()}):\n" + Path(log).read_text(errors="replace")[-3000:],
                pytrace=False)


class Cluster:
    """MinIO and a Strata server, and the `strata` CLI pointed at them."""

    def __init__(self, binary, meta, endpoint, workdir):
        self.binary, self.meta, self.endpoint, self.workdir = binary, meta, endpoint, workdir
        # The superuser's token, which the dev server wrote (docs/security.md).
        self.token_file = workdir / "strata" / "token"

    def strata(self, *args):
        """Runs `strata ARGS --meta ADDR` and returns its standard output; fails the test
        with its output if it fails."""
        r = subprocess.run([str(self.binary), *args, "--meta", self.meta, "--token-file", str(self.token_file)],
                           capture_output=True,
                           text=True, env=server_env(), timeout=120)
        if r.returncode != 0:
            pytest.fail(f"strata {' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}", pytrace=False)
        return r.stdout

    def worker_counters(self):
        """The one worker's counters from `strata admin workers`, in bytes."""
        lines = self.strata("admin", "workers").splitlines()
        head, row = lines[0].split(), lines[1].split()
        return {k: parse_size(v) for k, v in zip(head, row) if k in ("RPC-READ", "SC-READ", "BUCKET-IN")}


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def parse_size(s):
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]+)", s)
    if not m or m.group(2) not in _UNITS:
        raise ValueError(f"not a size from strata admin workers: {s!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    binary = required_file("STRATA_BINARY", REPO / "bin/strata", "run 'make build'")
    minio = required_file("STRATA_MINIO", REPO / ".cache/bin/minio", "run 'make minio'")
    work = tmp_path_factory.mktemp("cluster")
    procs = Processes()
    try:
        # A top-level directory of MinIO's drive is a bucket: the test needs no S3 client.
        (work / "minio/lake").mkdir(parents=True)
        port = free_port()
        env = server_env()
        env.update(MINIO_ROOT_USER=ACCESS_KEY, MINIO_ROOT_PASSWORD=SECRET_KEY, MINIO_BROWSER="off",
                   MINIO_UPDATE="off")
        m = procs.start([str(minio), "server", "--address", f"127.0.0.1:{port}", "--console-address",
                         f"127.0.0.1:{free_port()}", str(work / "minio")], work / "minio.log", env)
        wait_live(m, work / "minio.log", f"http://127.0.0.1:{port}/minio/health/cluster")
        s = procs.start([str(binary), "server", "--dev", "--listen", "127.0.0.1:0", "--data-dir",
                         str(work / "strata"), "--client-token-file="], work / "strata.log", server_env())
        meta = wait_for_line(s, work / "strata.log", r"^strata: serving on (\S+)").group(1)
        c = Cluster(binary, meta, f"http://127.0.0.1:{port}", work)
        store = f"s3://lake/warehouse?endpoint={c.endpoint}"
        c.strata("admin", "ns", "create", "lake", "--mode", "cache", "--sync-interval", "-1", "--store", store)
        c.strata("admin", "ns", "create", "lakeview", "--mode", "cache", "--sync-interval", "0", "--store", store)
        yield c
    finally:
        procs.stop()


@pytest.fixture(scope="session")
def spark(cluster, tmp_path_factory):
    from pyspark.sql import SparkSession

    jar = shaded_jar()
    session = (
        SparkSession.builder.master("local[2,4]")  # 2 threads; a task may fail 3 times, then the job
        .appName("strata-spark-test")
        .config("spark.jars", str(jar))
        # NB: a jar given with --jars / spark.jars reaches Hadoop after it looked for FileSystem
        # services, so the scheme must be named (docs/java.md, "Spark").
        .config("spark.hadoop.fs.strata.impl", "io.strata.hadoop.StrataFileSystem")
        .config("spark.hadoop.fs.strata.meta.address", cluster.meta)
        .config("spark.hadoop.fs.strata.token.file", str(cluster.token_file))
        .config("spark.hadoop.fs.strata.block.size", BLOCK_SIZE)
        # Parquet gives its row group size as the new file's block size: 1 MiB row groups, so
        # that a file holds several, each in a block of its own.
        .config("spark.hadoop.parquet.block.size", str(1 << 20))
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .config("spark.driver.extraJavaOptions", "-Dderby.system.home=" + str(tmp_path_factory.mktemp("derby")))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
