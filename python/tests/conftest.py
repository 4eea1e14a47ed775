"""The Python package's tests run against a real cluster on loopback, for the session:
`strata server --dev` (STRATA_BINARY: a namespace service and a worker on this host, so warm
reads are short-circuit) with the block-mode namespace `default`, and MinIO (STRATA_MINIO) as
the bucket of the cache-mode namespace `lake`. The client side is the package as installed
(scripts/python/test.sh installs it into the test's virtual environment), configured through
the same environment variables as the CLI, which the fixtures set: fsspec.open("strata://...")
needs nothing else.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

import strata

REPO = Path(__file__).resolve().parents[2]
ACCESS_KEY, SECRET_KEY = "strata-test", "strata-test-secret"
START_TIMEOUT = 60  # seconds for a server to come up on a busy 2-core machine


def required_file(env: str, default: Path, hint: str) -> Path:
    path = Path(os.environ.get(env) or default)
    if not path.is_file():
        pytest.fail(f"{env}: no file at {path}: {hint}", pytrace=False)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY,
               AWS_EC2_METADATA_DISABLED="true", AWS_REGION="us-east-1", STRATA_PLAINTEXT="1")
    return env


def wait_until(proc: subprocess.Popen, log: Path, ready) -> object:
    """Polls ready() until it returns something, or proc exits, or the start timeout passes."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        got = ready()
        if got:
            return got
        time.sleep(0.05)
    pytest.fail(f"{log}: not ready (exit status {proc.poll()}):\n{log.read_text(errors='replace')[-3000:]}",
                pytrace=False)


class Cluster:
    """The servers, and the strata CLI pointed at them."""

    def __init__(self, binary: Path, meta: str, work: Path) -> None:
        self.binary, self.meta, self.work = binary, meta, work
        self.token_file = work / "strata" / "token"

    def strata(self, *args: str, check: bool = True) -> str:
        r = subprocess.run([str(self.binary), *args, "--meta", self.meta, "--token-file", str(self.token_file)],
                           capture_output=True, text=True, env=server_env(), timeout=120)
        if check and r.returncode != 0:
            pytest.fail(f"strata {' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}", pytrace=False)
        return r.stdout

    def worker_counters(self) -> dict[str, str]:
        """The one worker's counters from `strata admin workers`, as printed."""
        lines = self.strata("admin", "workers").splitlines()
        return dict(zip(lines[0].split(), lines[1].split(), strict=True))


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    binary = required_file("STRATA_BINARY", REPO / "bin/strata", "run 'make build'")
    minio = required_file("STRATA_MINIO", REPO / ".cache/bin/minio", "run 'make minio'")
    work = tmp_path_factory.mktemp("cluster")
    procs: list[subprocess.Popen] = []

    def start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
        with open(log, "wb") as out:
            p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                 start_new_session=True)
        procs.append(p)
        return p

    try:
        (work / "minio/lake").mkdir(parents=True)
        port = free_port()
        env = server_env()
        env.update(MINIO_ROOT_USER=ACCESS_KEY, MINIO_ROOT_PASSWORD=SECRET_KEY, MINIO_BROWSER="off",
                   MINIO_UPDATE="off")
        m = start([str(minio), "server", "--address", f"127.0.0.1:{port}", "--console-address",
                   f"127.0.0.1:{free_port()}", str(work / "minio")], work / "minio.log", env)
        wait_until(m, work / "minio.log", lambda: _live(f"http://127.0.0.1:{port}/minio/health/cluster"))
        # The cache holds the 1 GiB file of test_big_file.py whole, and what the others write.
        s = start([str(binary), "server", "--dev", "--listen", "127.0.0.1:0", "--data-dir", str(work / "strata"),
                   "--client-token-file=", "--worker-cache-size", "3GiB"], work / "strata.log", server_env())
        meta = wait_until(s, work / "strata.log", lambda: re.search(
            r"^strata: serving on (\S+)", (work / "strata.log").read_text(errors="replace"), re.M))
        c = Cluster(binary, meta.group(1), work)
        c.strata("admin", "ns", "create", "lake", "--mode", "cache", "--sync-interval", "-1", "--store",
                 f"s3://lake/data?endpoint=http://127.0.0.1:{port}")
        # The client's configuration, as the CLI takes it.
        os.environ.update(STRATA_META=c.meta, STRATA_TOKEN_FILE=str(c.token_file), STRATA_PLAINTEXT="1")
        # The package installed from its wheel runs the binary it bundles, as a user's does.
        if (Path(strata.__file__).parent / "_bin" / "strata").is_file():
            os.environ.pop("STRATA_BINARY", None)
        else:
            os.environ["STRATA_BINARY"] = str(binary)
        yield c
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _live(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def fs(cluster: Cluster):
    """The file system as fsspec makes it for strata:// with no storage options."""
    import fsspec

    return fsspec.filesystem("strata")


@pytest.fixture
def base(fs, request: pytest.FixtureRequest) -> str:
    """A fresh directory of the block-mode namespace for one test."""
    d = f"default/t-{re.sub(r'[^A-Za-z0-9]+', '-', request.node.name)[:60]}-{uuid.uuid4().hex[:8]}"
    fs.makedirs(d)
    return d
