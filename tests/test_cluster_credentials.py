"""No Redis password in any output: a worker crawling through a password-protected (and a TLS)
redis-server, and ``focuscrawl status``, print and write the URL only redacted; a wrong
password is one clear line. Real redis-server processes, a real loopback site, real workers."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import redis

from focuscrawl.cli import main
from focuscrawl.credentials import redact_text, redact_url, with_env_password
from tests.cluster_site import ClusterSite
from tests.conftest import RedisServer

PASSWORD = "pw-Zq8sX2vL9t"  # the string that must appear in no output
WRONG = "wrong-Hk4mR7pQ"
PREFIX = "focuscrawl:topical_redis"


# -- redaction ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@h:6379/0", "redis://:***@h:6379/0"),
        ("rediss://user:s3cret@h:6380/1", "rediss://user:***@h:6380/1"),
        ("redis://s3cret@h/0", "redis://***@h/0"),
        ("redis://h:6379/0", "redis://h:6379/0"),
        ("rediss://h/0?ssl_ca_certs=/tmp/ca.pem&password=s3cret", "rediss://h/0?ssl_ca_certs=/tmp/ca.pem&password=***"),
        ("redis://:p%40ss@h:1/0", "redis://:***@h:1/0"),
        ("redis://:pa#ss@h:1/0", "redis://:***@h:1/0"),
        ("redis://:pw@h:port/0", "redis://:***@h:port/0"),
        ("", ""),
    ],
)  # fmt: skip
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_text_masks_urls_and_known_passwords() -> None:
    url = "redis://:p%40ss-word@h:1/0"
    text = f"cannot reach {url}: server said 'p@ss-word' and p%40ss-word; see rediss://u:x@y/"
    out = redact_text(text, url)
    assert "p@ss-word" not in out and "p%40ss-word" not in out and ":x@" not in out
    assert "redis://:***@h:1/0" in out and "rediss://u:***@y/" in out


def test_password_from_the_environment() -> None:
    env = {"FOCUSCRAWL_REDIS_PASSWORD": "a/b@c"}
    assert with_env_password("redis://h:1/0", env) == "redis://:a%2Fb%40c@h:1/0"
    assert with_env_password("rediss://u@h:1/0", env) == "rediss://u:a%2Fb%40c@h:1/0"
    assert with_env_password("redis://:own@h:1/0", env) == "redis://:own@h:1/0"
    assert redis.connection.parse_url("redis://:a%2Fb%40c@h:1/0")["password"] == "a/b@c"


# -- servers --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def auth_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis-auth"), password=PASSWORD)
    server.start()
    yield server
    server.stop()


def make_certs(where: Path) -> tuple[Path, Path, Path]:
    """A self-signed CA and a server certificate for 127.0.0.1 / localhost (loopback only)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def cert(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name | None,
             signer: ec.EllipticCurvePrivateKey, ca: bool) -> x509.Certificate:  # fmt: skip
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        builder = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(issuer or name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            san = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        else:
            usage = x509.KeyUsage(False, False, False, False, False, True, True, False, False)
            builder = builder.add_extension(usage, critical=True)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = cert("focuscrawl test CA", ca_key, None, ca_key, True)
    server = cert("127.0.0.1", key, ca.subject, ca_key, False)
    paths = where / "ca.pem", where / "server.pem", where / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RedisServer, Path]]:
    """redis-server with AUTH on a TLS port only; skipped when redis-server lacks TLS."""
    workdir = tmp_path_factory.mktemp("redis-tls")
    ca, cert, key = make_certs(workdir)
    server = RedisServer(workdir, password=PASSWORD)
    server.args = (
        "--port", "0", "--tls-port", str(server.port), "--tls-cert-file", str(cert),
        "--tls-key-file", str(key), "--tls-ca-cert-file", str(ca), "--tls-auth-clients", "no",
    )  # fmt: skip
    try:
        server.start()
    except RuntimeError as exc:  # a build without TLS refuses the tls-* options and exits
        pytest.skip(f"redis-server has no TLS support here: {exc}")
    yield server, ca
    server.stop()


def tls_url(server: RedisServer, ca: Path, password: str = PASSWORD) -> str:
    query = f"ssl_ca_certs={quote(str(ca))}&ssl_cert_reqs=required"
    return f"rediss://:{password}@127.0.0.1:{server.port}/0?{query}"


# -- a worker and focuscrawl status ---------------------------------------------------------
def run_worker(
    tmp: Path, url: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """One ``topical_redis`` worker to the end of the crawl, with every output it can write."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical_redis", *args]
    cmd += ["-s", f"REDIS_URL={url}", "-s", "LOG_LEVEL=DEBUG", "-s", f"LOG_FILE={tmp / 'w.log'}"]
    cmd += ["-s", f"FOCUSCRAWL_STATS_FILE={tmp / 'stats.json'}", "-O", str(tmp / "items.jsonl")]
    cmd += ["-s", f"FOCUSCRAWL_DATA_DIR={tmp / 'data'}", "-s", f"JOBDIR={tmp / 'job'}"]
    cmd += [
        "-s",
        f"FOCUSCRAWL_CRAWL_LOG={tmp / 'crawl.jsonl'}",
        "-s",
        "TELNETCONSOLE_ENABLED=False",
    ]
    cmd += ["-s", "FOCUSCRAWL_ALLOW_PRIVATE=127.0.0.2", "-s", "FOCUSCRAWL_CLUSTER_STATS_INTERVAL=1"]
    cmd += ["-s", "FOCUSCRAWL_REDIS_RETRY_TIMEOUT=20"]
    full_env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings", **(env or {})}
    return subprocess.run(
        cmd, cwd=tmp, env=full_env, capture_output=True, text=True, timeout=300, check=False
    )


def leaks(tmp: Path, *outputs: str, secret: str = PASSWORD) -> list[str]:
    """Where ``secret`` (or its URL-quoted form) appears: outputs and every file under ``tmp``."""
    forms = {secret.encode(), quote(secret, safe="").encode()}
    found = [
        f"output {i}" for i, out in enumerate(outputs) if any(f.decode() in out for f in forms)
    ]
    for path in tmp.rglob("*"):
        if path.is_file() and any(f in path.read_bytes() for f in forms):
            found.append(str(path))
    return found


def crawl_and_check(tmp: Path, url: str, client: redis.Redis) -> None:
    client.flushdb()
    with ClusterSite(hosts=1, pages_per_host=6) as site:
        done = run_worker(tmp, url, "-a", "topic=birds", "-a", f"seeds={site.url(0)}")
        fetched = set(site.fetch_counts())
    log = (tmp / "w.log").read_text()
    assert done.returncode == 0, done.stderr[-3000:] + log[-3000:]
    assert fetched == set(site.urls), log[-3000:]
    assert f"at {redact_url(url)}" in log  # the frontier says where it is, redacted
    stats = json.loads((tmp / "stats.json").read_text())
    assert stats["finish_reason"] == "finished"
    status_json = subprocess.run(
        [sys.executable, "-m", "focuscrawl.cli", "status", "--json"],
        env={**os.environ, "FOCUSCRAWL_REDIS_URL": url},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert status_json.returncode == 0, status_json.stderr
    assert json.loads(status_json.stdout)["pages"] == len(site.urls)
    status_text = subprocess.run(
        [sys.executable, "-m", "focuscrawl.cli", "status", "--redis-url", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert status_text.returncode == 0 and "harvest rate" in status_text.stdout
    outputs = (done.stdout, done.stderr, status_json.stdout, status_json.stderr)
    outputs += (status_text.stdout, status_text.stderr)
    assert leaks(tmp, *outputs) == []


@pytest.mark.slow
def test_a_worker_and_status_never_print_the_password(
    tmp_path: Path, auth_redis: RedisServer
) -> None:
    client = redis.Redis.from_url(auth_redis.url)
    try:
        crawl_and_check(tmp_path, auth_redis.url, client)
        assert "unreachable" not in (tmp_path / "w.log").read_text()
    finally:
        client.close()


@pytest.mark.slow
def test_the_password_can_come_from_the_environment(
    tmp_path: Path, auth_redis: RedisServer
) -> None:
    """The job's arguments (which scrapyd logs) carry the URL without the password."""
    bare = f"redis://127.0.0.1:{auth_redis.port}/0"
    client = redis.Redis.from_url(auth_redis.url)
    client.flushdb()
    try:
        with ClusterSite(hosts=1, pages_per_host=3) as site:
            done = run_worker(
                tmp_path, bare, "-a", "topic=birds", "-a", f"seeds={site.url(0)}",
                env={"FOCUSCRAWL_REDIS_PASSWORD": PASSWORD},
            )  # fmt: skip
            assert done.returncode == 0 and set(site.fetch_counts()) == set(site.urls)
        status = subprocess.run(
            [sys.executable, "-m", "focuscrawl.cli", "status", "--redis-url", bare],
            env={**os.environ, "FOCUSCRAWL_REDIS_PASSWORD": PASSWORD},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert status.returncode == 0 and "pages 3" in status.stdout, status.stderr
        assert leaks(tmp_path, done.stdout, done.stderr, status.stdout, status.stderr) == []
    finally:
        client.close()


def test_status_with_a_wrong_password_is_one_clear_line(auth_redis: RedisServer) -> None:
    url = f"redis://:{WRONG}@127.0.0.1:{auth_redis.port}/0"
    done = subprocess.run(
        [sys.executable, "-m", "focuscrawl.cli", "status", "--redis-url", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "refused the credentials" in lines[0]
    assert f"redis://:***@127.0.0.1:{auth_redis.port}/0" in lines[0]
    assert WRONG not in done.stderr and PASSWORD not in done.stderr


def test_status_without_a_password_says_so(auth_redis: RedisServer, capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(["status", "--redis-url", f"redis://127.0.0.1:{auth_redis.port}/0"]) == 2
    err = capsys.readouterr().err
    assert "refused the credentials" in err and "FOCUSCRAWL_REDIS_PASSWORD" in err


@pytest.mark.slow
def test_a_worker_with_a_wrong_password_stops_at_once(
    tmp_path: Path, auth_redis: RedisServer
) -> None:
    url = f"redis://:{WRONG}@127.0.0.1:{auth_redis.port}/0"
    done = run_worker(tmp_path, url, "-a", "topic=birds", "-a", "seeds=http://127.0.0.2:9/")
    log = (tmp_path / "w.log").read_text()
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1 and "refused the credentials" in errors[0], log[-3000:]
    assert "Traceback" not in log and "unreachable" not in log
    assert json.loads((tmp_path / "stats.json").read_text())["finish_reason"] == "redis_auth"
    assert leaks(tmp_path, done.stdout, done.stderr, secret=WRONG) == []


# -- TLS ------------------------------------------------------------------------------------
def test_status_over_tls_with_auth(tls_redis: tuple[RedisServer, Path]) -> None:
    server, ca = tls_redis
    url = tls_url(server, ca)
    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
        client.set(f"{PREFIX}:n", 3)
    finally:
        client.close()
    done = subprocess.run(
        [sys.executable, "-m", "focuscrawl.cli", "status", "--redis-url", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "queued 3" in done.stdout, done.stderr
    # the plain protocol to the TLS port: an error line, no password, no hang
    plain = f"redis://:{PASSWORD}@127.0.0.1:{server.port}/0?socket_timeout=5"
    failed = subprocess.run(
        [sys.executable, "-m", "focuscrawl.cli", "status", "--redis-url", plain],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert failed.returncode == 2 and PASSWORD not in failed.stderr + failed.stdout


@pytest.mark.slow
def test_a_worker_crawls_over_tls(tmp_path: Path, tls_redis: tuple[RedisServer, Path]) -> None:
    server, ca = tls_redis
    url = tls_url(server, ca)
    client = redis.Redis.from_url(url)
    try:
        crawl_and_check(tmp_path, url, client)
    finally:
        client.close()
