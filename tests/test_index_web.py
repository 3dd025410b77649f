from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from PIL import Image

from focuscrawl.index import PageIndex
from focuscrawl.web import data
from focuscrawl.web.app import Sources, WebServer, make_server


def write_log(path: Path, relevant: list[bool]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i, rel in enumerate(relevant, 1):
            rec = {
                "seq": i,
                "url": f"http://t/{i}",
                "status": 200,
                "relevance": 0.9 if rel else 0.1,
                "relevant": rel,
                "score": 0.5,
                "depth": 1,
                "t": 1000.0 + i,
            }
            f.write(json.dumps(rec) + "\n")
        f.write("{not json\n")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[WebServer]:
    index = tmp_path / "index.sqlite"
    with PageIndex.open(index) as ix:
        ix.upsert(
            "http://t/eagle",
            "Eagle <script>alert('t')</script>",
            "The bald eagle <img src=x onerror=alert(1)> eats fish",
            relevance=0.9,
            fetched_at=500.0,
        )
        ix.upsert("javascript:alert(1)", "Evil link", "eagle evil", relevance=0.2, fetched_at=900.0)
        cid = ix.begin_crawl()
        ix.end_crawl(cid, {"change/new": 4, "change/significant": 2, "change/unchanged": 7})
    log = tmp_path / "crawl.jsonl"
    write_log(log, [True, False, True, True] * 30)
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"scheduler/enqueued": 50, "scheduler/dequeued": 20}))
    server = make_server(Sources(index=index, crawl_log=log, stats=stats))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def get(server: WebServer, path: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def test_search_page_escapes_crawled_text(site: WebServer) -> None:
    status, ctype, body = get(site, "/?q=eagle")
    html = body.decode()
    assert status == 200 and ctype.startswith("text/html")
    assert "<mark>eagle</mark>" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#x27;t&#x27;)" in html
    assert "<img src=x" not in html
    assert 'href="javascript:' not in html and "Evil link" in html  # shown, not linked
    assert 'href="http://t/eagle"' in html


@pytest.mark.parametrize("q", ['"', "(((", "^:*", "x" * 2000])
def test_bad_queries_show_a_message(site: WebServer, q: str) -> None:
    status, _, body = get(site, "/?q=" + quote(q))
    assert status == 200
    assert 'class="error" id="error"' in body.decode()


def test_fts_syntax_is_searched_as_words(site: WebServer) -> None:
    status, _, body = get(site, "/?q=" + quote("NEAR(eagle"))
    assert status == 200 and 'id="none"' in body.decode()  # "near" AND "eagle": no page has both


def test_api_search_and_errors(site: WebServer) -> None:
    status, _, body = get(site, "/api/search?q=eagle&n=1")
    assert status == 200
    hits = json.loads(body)["hits"]
    assert [h["url"] for h in hits] == ["http://t/eagle"]
    assert get(site, "/api/search?q=%28%28")[0] == 400
    assert get(site, "/api/search?q=eagle&n=x")[0] == 400
    assert get(site, "/nowhere")[0] == 404


def test_dashboard_figures(site: WebServer) -> None:
    status, _, body = get(site, "/api/dashboard")
    d = json.loads(body)
    assert (d["fetched"], d["relevant"], d["indexed"], d["queue_size"]) == (120, 90, 2, 30)
    assert (
        d["changes"]["new"] == 4 and d["changes"]["unchanged"] == 7 and d["changes"]["deleted"] == 0
    )
    assert d["bad_lines"] == 1
    assert d["freshness"]["oldest_age"] > d["freshness"]["newest_age"] > 0
    html = get(site, "/dashboard")[2].decode()
    assert 'id="harvest-plot"' in html and "0.750" in html  # harvest rate 90/120


def test_plot_is_a_png_of_the_stated_size(site: WebServer) -> None:
    status, ctype, body = get(site, "/plot/harvest.png")
    assert status == 200 and ctype == "image/png"
    img = Image.open(io.BytesIO(body))
    assert img.size == (800, 360)


def test_no_index_yet(tmp_path: Path) -> None:
    server = make_server(Sources(index=tmp_path / "none.sqlite"))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        assert "no index yet" in get(server, "/?q=eagle")[2].decode()
        assert get(server, "/api/search?q=eagle")[0] == 503
        d = json.loads(get(server, "/api/dashboard")[2])
        assert d["fetched"] == 0 and d["indexed"] is None and d["queue_size"] is None
        assert get(server, "/plot/harvest.png")[0] == 200
    finally:
        server.shutdown()
        server.server_close()


def test_only_loopback(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="loopback"):
        make_server(Sources(index=tmp_path / "i.sqlite"), host="0.0.0.0")


def test_harvest_series_cumulative_and_window() -> None:
    recs = [{"seq": i, "relevant": i <= 4, "t": 10.0 + i} for i in range(1, 9)]
    s = data.harvest_series(recs, window=4)
    assert s.fetched == list(range(1, 9))
    assert s.cumulative[3] == 1.0 and s.cumulative[7] == 0.5
    assert s.moving[3] == 1.0 and s.moving[5] == 0.5 and s.moving[7] == 0.0
    assert s.elapsed[0] == 0.0 and s.elapsed[-1] == 7.0
