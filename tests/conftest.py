"""Session fixtures: a real redis-server on a free port, the corpora path."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from focuseval.corpora import corpora_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A real ``redis-server`` subprocess; ready when it says so on stdout (no polling).

    ``password``: clients must AUTH (``requirepass``); ``args``: more server options (TLS)."""

    def __init__(
        self,
        workdir: Path,
        appendonly: bool = False,
        password: str | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.workdir = workdir
        self.appendonly = appendonly
        self.password = password
        self.args = args
        self.port = free_port()
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.fail(
                "redis-server is not installed (.ci/run installs it: apt-get install redis-server)"
            )
        self.proc = subprocess.Popen(
            [
                exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes" if self.appendonly else "no",
                "--dir",
                str(self.workdir),
                "--loglevel",
                "notice",
                "--logfile",
                "",
                *(["--requirepass", self.password] if self.password else []),
                *self.args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if "Ready to accept connections" in line:
                # keep draining its log so that a full pipe never blocks the server
                threading.Thread(target=self.proc.stdout.read, daemon=True).start()
                return
        raise RuntimeError(f"redis-server exited with {self.proc.wait()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real 3-master Redis Cluster on free loopback ports (cluster_state:ok)."""
    from focuseval.localcluster import LocalCluster

    cluster = LocalCluster(tmp_path_factory.mktemp("redis-cluster"), masters=3)
    try:
        cluster.start()
        yield cluster.url
    finally:
        cluster.stop()


@pytest.fixture
def cluster_client(redis_cluster_url: str):  # type: ignore[no-untyped-def]
    """A ``RedisCluster`` client; every master flushed before and after the test."""
    from redis.cluster import RedisCluster

    client = RedisCluster.from_url(redis_cluster_url)
    client.flushall(target_nodes=RedisCluster.PRIMARIES)
    yield client
    client.flushall(target_nodes=RedisCluster.PRIMARIES)
    client.close()


@pytest.fixture(scope="session")
def redis_url(redis_server: RedisServer) -> str:
    return os.environ.get("FOCUSCRAWL_TEST_REDIS_URL") or redis_server.url


@pytest.fixture
def redis_client(redis_url: str):  # type: ignore[no-untyped-def]
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture(scope="session")
def corpora() -> Path:
    path = corpora_dir()
    if path is None:
        pytest.skip("needs ../shared/corpora (set FOCUSCRAWL_CORPORA); .ci/run sets it")
    return path


@pytest.fixture(scope="session")
def testweb_synthetic() -> Iterator[Any]:
    """The synthetic test web in a subprocess on a free port (ready when it prints its line)."""
    from focuseval.testweb import TestWebProcess

    with TestWebProcess(corpus="synthetic") as web:
        yield web


# --- local test web (evaluation) ----------------------------------------------------------
@pytest.fixture(scope="session")
def testweb_wikispeedia(corpora: Path) -> Iterator[object]:
    """The Wikispeedia test web (8 hosts) in a subprocess on a free port; a TestWebProcess."""
    from focuseval.testweb import TestWebProcess

    with TestWebProcess("wikispeedia", corpora=corpora) as web:
        yield web


# --- fault injection (tests/test_faults_*.py) -----------------------------------------------
@pytest.fixture(scope="session")
def fault_web() -> Iterator[Any]:
    """A small synthetic web (about 600 pages on 6 hosts) for the fault-injection crawls."""
    from focuseval.testweb import TestWebProcess

    with TestWebProcess(corpus="synthetic", pages=300) as web:
        yield web


@pytest.fixture(scope="session")
def fault_reference(fault_web: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """What one uninterrupted breadth-first crawl of ``fault_web`` fetched and indexed."""
    from tests.fault_crawl import BFS, CrawlProcess, crawl_args, crawl_facts, topic_file

    work = tmp_path_factory.mktemp("fault-reference")
    args = crawl_args(fault_web, topic_file(work, fault_web), work, 1, *BFS)
    crawl = CrawlProcess(work, "topical", args)
    assert crawl.finish() == 0, crawl.log[-3000:]
    return crawl_facts(work)


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts what the Redis client sends (a pipeline is one send); the server stays real."""
    import redis.connection

    sent = [0]
    original = redis.connection.AbstractConnection.send_packed_command

    def counting(self, command, check_health=True):  # type: ignore[no-untyped-def]
        sent[0] += 1
        return original(self, command, check_health)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counting)
    return sent


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A real PostgreSQL cluster of the suite's own on a free loopback port (tests/pg_server.py)."""
    from tests.pg_server import PostgresServer

    server = PostgresServer()
    try:
        server.init()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    server.start()
    yield server
    server.remove()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL of a new, empty database of ``pg_server`` (one per test)."""
    import psycopg

    global _PG_DBS
    _PG_DBS += 1
    name = f"t{os.getpid()}_{_PG_DBS}"
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pg_server.url(name)


_PG_DBS = 0
