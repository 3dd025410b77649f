"""Three Redis-fed workers write one PostgreSQL index (issue 30's first target): every page
that is relevant by its last judgement is indexed once, no other page is, and any machine's
``focuscrawl search`` finds them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.cli import main as cli_main
from focuscrawl.cluster.state import publish_topic
from focuscrawl.index.backend import open_index
from focuscrawl.topic import load_topic
from tests.cluster_site import ClusterSite
from tests.conftest import RedisServer
from tests.pg_server import PASSWORD
from tests.test_cluster_workers import PREFIX, Worker


def last_judgements(feeds: list[Path]) -> dict[str, bool]:
    """URL → relevant, by the latest fetch of the URL in any worker's items."""
    latest: dict[str, tuple[float, bool]] = {}
    for feed in feeds:
        for item in json.loads(feed.read_text() or "[]"):
            at = float(item.get("fetched_at") or 0.0)
            if item["url"] not in latest or at >= latest[item["url"]][0]:
                latest[item["url"]] = (at, bool(item.get("relevant")))
    return {url: relevant for url, (_, relevant) in latest.items()}


@pytest.mark.slow
@pytest.mark.parametrize("writer_thread", [False, True], ids=["inline", "writer-thread"])
def test_three_workers_one_postgres_index(
    tmp_path: Path, pg_url: str, capsys: Any, writer_thread: bool
) -> None:
    """(``writer-thread``: each worker sends its batches from the index writer thread.)"""
    server = RedisServer(tmp_path / "redis-dir")
    (tmp_path / "redis-dir").mkdir()
    server.start()
    client = None
    try:
        import redis

        client = redis.Redis.from_url(server.url)
        with ClusterSite(hosts=3, pages_per_host=15) as site:
            feeds = [tmp_path / f"w{i}.json" for i in (1, 2, 3)]
            index = ["-s", f"FOCUSCRAWL_INDEX_URL={pg_url}"]
            index += ["-s", f"FOCUSCRAWL_INDEX_WRITER_THREAD={writer_thread}"]
            workers = [
                Worker(tmp_path, f"w{i}", server.url, "-O", str(feeds[i - 1]), *index)
                for i in (1, 2, 3)
            ]
            try:
                assert all(w.wait_for_line("Waiting to join crawl") for w in workers)
                topic = load_topic("birds", f"{site.url(0)},{site.url(1)}")
                publish_topic(client, PREFIX, topic)
                codes = [w.finish() for w in workers]
            finally:
                for w in workers:
                    w.kill()
            assert codes == [0, 0, 0], "\n".join(w.log for w in workers)
            assert PASSWORD in pg_url
            assert not [line for w in workers for line in w.lines if PASSWORD in line]
        judged = last_judgements(feeds)
        relevant = {url for url, rel in judged.items() if rel}
        assert len(judged) == 45 and relevant  # every page of the site fetched, judged
        ix = open_index(pg_url, readonly=True)
        pages = list(ix.pages())
        assert sorted(p["url"] for p in pages) == sorted(relevant)  # each once, nothing else
        assert len(ix.crawls(10)) == 3  # one record per worker's crawl
        ix.close()
        title = pages[0]["title"]
        assert cli_main(["search", title, "--index", pg_url, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["hits"]
    finally:
        if client is not None:
            client.close()
        server.stop()
