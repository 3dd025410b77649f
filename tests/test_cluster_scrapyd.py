"""A real scrapyd on loopback, with authentication: deploy with ``scrapyd-deploy``, schedule
``topical`` against the test web through the JSON API, wait for the job, read its items."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
USER, PASSWORD = "crawler", "s3cret-pass"


class Scrapyd:
    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        for sub in ("eggs", "logs", "items", "dbs"):
            (workdir / sub).mkdir()
        (workdir / "scrapyd.conf").write_text(
            "[scrapyd]\n"
            f"bind_address = 127.0.0.1\nhttp_port = {self.port}\n"
            f"username = {USER}\npassword = {PASSWORD}\n"
            f"eggs_dir = {workdir / 'eggs'}\nlogs_dir = {workdir / 'logs'}\n"
            f"items_dir = {workdir / 'items'}\ndbs_dir = {workdir / 'dbs'}\n"
            "max_proc = 1\npoll_interval = 0.5\n"
        )
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [str(BIN / "scrapyd")], cwd=self.dir, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if f"Site starting on {self.port}" in line:  # listening (the console line is earlier)
                threading.Thread(target=self.proc.stdout.read, daemon=True).start()
                return
        raise RuntimeError(f"scrapyd exited with {self.proc.wait()}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)
            assert self.proc.stdout is not None
            self.proc.stdout.close()

    def call(
        self, endpoint: str, data: list[tuple[str, str]] | None = None, auth: bool = True
    ) -> Any:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.url + endpoint, data=body)
        if auth:
            token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


@pytest.fixture
def scrapyd(tmp_path: Path) -> Iterator[Scrapyd]:
    (tmp_path / "scrapyd").mkdir()
    server = Scrapyd(tmp_path / "scrapyd")
    server.start()
    yield server
    server.stop()


def project_copy(tmp_path: Path, scrapyd: Scrapyd) -> Path:
    """The project as a user has it, with a deploy target carrying the credentials."""
    dest = tmp_path / "project"
    shutil.copytree(
        ROOT / "focuscrawl", dest / "focuscrawl", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md", "scrapy.cfg"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, dest / name)
    with open(dest / "scrapy.cfg", "a") as cfg:
        cfg.write(
            f"\n[deploy:test]\nurl = {scrapyd.url}\nproject = focuscrawl\n"
            f"username = {USER}\npassword = {PASSWORD}\n"
        )
    return dest


@pytest.mark.slow
def test_deploy_schedule_and_crawl_through_scrapyd(
    tmp_path: Path, scrapyd: Scrapyd, testweb_synthetic: Any
) -> None:
    with pytest.raises(urllib.error.HTTPError) as denied:
        scrapyd.call("daemonstatus.json", auth=False)
    assert denied.value.code == 401
    denied.value.close()  # an HTTPError holds the response socket open until closed

    project = project_copy(tmp_path, scrapyd)
    deploy = subprocess.run(
        [str(BIN / "scrapyd-deploy"), "test", "--version", "r1"],
        cwd=project, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert deploy.returncode == 0, deploy.stderr + deploy.stdout
    assert json.loads(deploy.stdout)["status"] == "ok"
    assert "topical" in scrapyd.call("listspiders.json?project=focuscrawl")["spiders"]

    seeds = ",".join(testweb_synthetic.seeds["birds"])
    job = scrapyd.call(
        "schedule.json",
        [("project", "focuscrawl"), ("spider", "topical"), ("topic", "birds"), ("seeds", seeds),
         ("setting", "CLOSESPIDER_PAGECOUNT=15"),
         ("setting", f"FOCUSCRAWL_ALLOW_PRIVATE={testweb_synthetic.allow_private}")],
    )  # fmt: skip
    assert job["status"] == "ok", job
    log = wait_for_job(scrapyd, job)
    assert "Spider closed (closespider_pagecount)" in log, log[-3000:]
    items_path = scrapyd.dir / "items" / "focuscrawl" / "topical" / f"{job['jobid']}.jl"
    items = [json.loads(line) for line in items_path.read_text().splitlines()]
    assert len(items) >= 15
    assert all(item["url"].startswith("http://127.0.0.") for item in items)
    assert sum(item["relevant"] for item in items) >= 5  # the seeds are about birds

    # a wrong setting: the job fails before the engine starts, with the line in its log
    bad = scrapyd.call(
        "schedule.json",
        [("project", "focuscrawl"), ("spider", "topical"), ("topic", "birds"), ("seeds", seeds),
         ("setting", "FOCUSCRAWL_LINK_WORDS=abc")],
    )  # fmt: skip
    log = wait_for_job(scrapyd, bad)
    assert "FOCUSCRAWL_LINK_WORDS must be a number >= 0, got 'abc'" in log, log[-3000:]
    assert "Spider opened" not in log


def wait_for_job(scrapyd: Scrapyd, job: dict[str, Any]) -> str:
    """Wait until scrapyd lists the job as finished; its log."""
    finished = threading.Event()
    for _ in range(600):  # scrapyd's API is polled: it has no completion callback
        jobs = scrapyd.call("listjobs.json?project=focuscrawl")
        if any(j["id"] == job["jobid"] for j in jobs["finished"]):
            break
        finished.wait(0.5)
    else:
        pytest.fail(f"job {job['jobid']} did not finish: {jobs}")
    return (scrapyd.dir / "logs" / "focuscrawl" / "topical" / f"{job['jobid']}.log").read_text()
