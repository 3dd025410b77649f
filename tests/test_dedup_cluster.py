"""Two ``topical_redis`` workers (real processes, one real Redis) crawl the mirrored web with
``FOCUSCRAWL_DEDUP``: the near-duplicate index is shared through Redis, so a copy is marked
whichever worker fetched its original."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from focuseval.dedup_metrics import dedup_metrics
from focuseval.mirrored import MirroredWeb
from focuseval.testweb import TestWebProcess

pytestmark = [pytest.mark.slow, pytest.mark.redis]


@pytest.fixture(scope="module")
def mirrored_web() -> Iterator[TestWebProcess]:
    with TestWebProcess("mirrored") as web:
        yield web


def worker(
    tmp: Path, name: str, web: TestWebProcess, redis_url: str, **extra: Any
) -> subprocess.Popen[str]:
    topic = tmp / "birds.toml"
    seeds = json.dumps(web.seeds["birds"])
    topic.write_text(f'name = "birds"\nkeywords = ["birds", "nest", "feathers"]\nseeds = {seeds}\n')
    args = {
        "REDIS_URL": redis_url,
        "FOCUSCRAWL_ALLOW_PRIVATE": web.allow_private,
        "FOCUSCRAWL_DEDUP": True,
        "FOCUSCRAWL_STRATEGY": "bfs",
        "FOCUSCRAWL_CRAWL_LOG": tmp / f"{name}.jsonl",
        "FOCUSCRAWL_DATA_DIR": tmp / f"{name}-data",
        "CLOSESPIDER_TIMEOUT": 250,  # a safety net: the crawl ends by itself long before
        "FOCUSCRAWL_REDIS_LEASE": 5,  # what the first worker had in flight comes back soon
        **extra,
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical_redis", "-a", f"topic={topic}"]
    for key, value in args.items():
        cmd += ["-s", f"{key}={value}"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    return subprocess.Popen(
        cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def test_two_workers_share_the_index(
    tmp_path: Path, mirrored_web: TestWebProcess, redis_url: str, redis_client: Any
) -> None:
    # The first worker stops after 150 pages and the second takes over the shared queue, so
    # both fetch whatever the machine's speed (started together, one could drain the web
    # before the other has started), and the second meets copies of pages the first fetched.
    runs: list[tuple[str, dict[str, Any]]] = [("w1", {"CLOSESPIDER_PAGECOUNT": 150}), ("w2", {})]
    for name, extra in runs:
        proc = worker(tmp_path, name, mirrored_web, redis_url, **extra)
        _, err = proc.communicate(timeout=280)
        assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]
    logs = {n: (tmp_path / f"{n}.jsonl").read_text().splitlines() for n in ("w1", "w2")}
    assert all(logs.values())  # both workers fetched
    records = sorted(
        (json.loads(x) for lines in logs.values() for x in lines), key=lambda r: r["t"]
    )
    m = dedup_metrics(records, MirroredWeb(mirrored_web.hosts, mirrored_web.port).groups())
    assert m.duplicates >= 40, m
    assert m.marked_share >= 0.9, m  # two copies in flight at once may both pass
    assert m.false_share < 0.01, m
    marked = {json.loads(x)["duplicate_of"] for x in logs["w2"] if "duplicate_of" in x}
    firsts = {json.loads(x)["url"] for x in logs["w1"]}
    assert marked & firsts  # worker 2 marked copies of pages worker 1 fetched
    assert redis_client.exists("focuscrawl:topical_redis:dup:n")
