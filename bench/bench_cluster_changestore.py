"""Redis change-store bytes per recorded page: one Redis, and a 3-master Redis Cluster (records
sharded by URL hash), and the spread of that memory over the masters.

Records 20,000 URLs (on 1,000 hosts) with the fingerprints of 800-word synthetic pages (ETag,
Last-Modified, hashes, simhash, the document index), one visit each.

    .venv/bin/python bench/bench_cluster_changestore.py
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_cluster_memory import Server  # noqa: E402
from bench_cluster_shards import Nodes, spread  # noqa: E402
from focuseval.localcluster import LocalCluster  # noqa: E402

from focuscrawl.blocks import partition  # noqa: E402
from focuscrawl.change.fingerprint import Fingerprints, fingerprint  # noqa: E402
from focuscrawl.change.store_redis import RedisChangeStore  # noqa: E402

N = 20_000
WORDS = [
    "birds",
    "nest",
    "feathers",
    "song",
    "wings",
    "warbler",
    "migration",
    "owls",
    "finch",
    "eggs",
    "species",
    "wetland",
]


def versions(count: int = 50) -> list[Fingerprints]:
    rng = random.Random(3)
    out = []
    for i in range(count):
        text = " ".join(rng.choice(WORDS) + str(rng.randint(0, 300)) for _ in range(800))
        html = (
            f"<html><head><title>Page {i}</title></head><body><article><h1>Page {i}</h1>"
            f"<p>{text}</p></article></body></html>"
        ).encode()
        url = f"https://www.site{i}.example.org/wiki/p{i}"
        headers = {"ETag": f'"abc{i}"', "Last-Modified": "Mon, 01 Dec 2026 10:00:00 GMT"}
        out.append(fingerprint(partition(html, url), html, headers))
    return out


def run(store: RedisChangeStore, nodes: Nodes, fps: list[Fingerprints]) -> tuple[float, Any]:
    store.open()
    base = nodes.used()
    for i in range(N):
        url = f"https://www.site{i % 1000}.example.org/wiki/page-{i}"
        store.record(url, fps[i % len(fps)], "new", 1.7e9 + i, {"depth": 2})
    store.flush()
    per_master = [a - b for a, b in zip(nodes.used(), base, strict=True)]
    store.close()
    return sum(per_master) / N, per_master


def main() -> None:
    fps = versions()
    server = Server()
    try:
        one, _ = run(RedisChangeStore(server.url, "fc:chg"), Nodes([server.port]), fps)
    finally:
        server.stop()
    print(f"one Redis: {one:.0f} B per recorded page")
    cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="fc-bench-chg-")), masters=3).start()
    try:
        store = RedisChangeStore(cluster.url, "fc:chg", cluster=True)
        many, per_master = run(store, Nodes(cluster.ports), fps)
    finally:
        cluster.stop()
    print(f"cluster:   {many:.0f} B per recorded page ({many / one:.3f}x)")
    print(f"per master {per_master}  spread ±{spread(per_master) * 100:.1f} %")


if __name__ == "__main__":
    main()
