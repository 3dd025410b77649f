"""The page index on PostgreSQL (issue 30): the SQLite index's contract on both backends, and
what only a shared database meets (writers at once, a killed writer, a restarted server).

Every test runs against the suite's own PostgreSQL cluster (``pg_server``: initdb/postgres on a
free loopback port, tests/pg_server.py), each in a database of its own (``pg_url``)."""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.cli import main as cli_main
from focuscrawl.index import RankWeights
from focuscrawl.index.backend import IndexUnavailable, describe, is_postgres, open_index
from focuscrawl.index.store import MAX_TEXT_CHARS, MAX_TITLE_CHARS
from focuscrawl.pipelines.index import IndexPipeline
from tests.test_index_pipeline import answered, page

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty index of either backend: a SQLite path or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "index.sqlite")
    return str(request.getfixturevalue("pg_url"))


# --- the contract, on both backends --------------------------------------------------------


def test_upsert_replace_remove_and_reopen_readonly(location: str) -> None:
    ix = open_index(location)
    assert ix.upsert("http://a/1", "Eagle", "bald eagle fish", relevance=0.8) is True
    assert ix.upsert("http://a/2", "Owl", "owl night", relevance=0.7) is True
    assert ix.upsert("http://a/1", "Heron", "grey heron wades", relevance=0.6) is False
    assert len(ix) == 2
    assert ix.search("eagle").hits == []
    (hit,) = ix.search("heron").hits
    assert (hit.url, hit.title, hit.relevance) == ("http://a/1", "Heron", 0.6)
    assert ix.remove("http://a/1") is True and ix.remove("http://a/1") is False
    assert "http://a/2" in ix and "http://a/1" not in ix
    ix.commit()
    ix.upsert("http://a/3", "Uncommitted", "never seen")
    ix.close()  # not committed: not kept
    ro = open_index(location, readonly=True)
    assert [h.url for h in ro.search("owl").hits] == ["http://a/2"]
    assert len(ro) == 1
    ro.close()


def test_ranking_combines_text_relevance_and_authority(location: str) -> None:
    ix = open_index(location)
    ix.upsert("http://a/low", "Eagle", "eagle eagle nest", relevance=0.1)
    ix.upsert("http://a/high", "Eagle", "eagle eagle nest", relevance=0.9)
    ix.upsert("http://a/other", "Other", "unrelated words here", relevance=1.0)
    ix.upsert("http://a/title", "Kingfisher", "a bird by the river", relevance=0.5)
    ix.upsert("http://a/body", "River birds", "the kingfisher dives", relevance=0.5)
    assert [h.url for h in ix.search("eagle").hits] == ["http://a/high", "http://a/low"]
    bm25 = RankWeights(relevance=0.0)
    assert [h.url for h in ix.search("kingfisher", weights=bm25).hits][0] == "http://a/title"
    # phrase, prefix, the OR fallback, stop words kept in a phrase
    assert [h.url for h in ix.search('"eagle nest"').hits] == ["http://a/high", "http://a/low"]
    assert {h.url for h in ix.search("kingfish*").hits} == {"http://a/title", "http://a/body"}
    result = ix.search("eagle zebra")
    assert result.mode == "or" and {h.url for h in result.hits} == {"http://a/high", "http://a/low"}
    assert [h.url for h in ix.search('"by the river"').hits] == ["http://a/title"]
    assert ix.set_authority({"http://a/low": 1.0, "http://a/none": 0.3}) == 1
    w = RankWeights(relevance=0.0, authority=0.5)
    assert [h.url for h in ix.search("eagle", weights=w).hits][0] == "http://a/low"
    ix.upsert("http://a/low", "Eagle", "eagle again", relevance=0.1)  # keeps its authority
    assert {h.url: h.authority for h in ix.search("eagle").hits}["http://a/low"] == 1.0
    assert ix.set_relevance({"http://a/low": 0.95}) == 1
    assert ix.search("eagle").hits[0].url == "http://a/low"
    (hit,) = ix.search("dives").hits
    assert "\ue000dives\ue001" in hit.snippet
    ix.upsert("http://a/cafe", "Café Zürich", "crème brûlée")
    for query in ("cafe", "café", "zurich", "creme brulee"):
        assert [h.url for h in ix.search(query).hits] == ["http://a/cafe"], query
    ix.commit()
    ix.close()


def test_changes_counts_and_export(location: str) -> None:
    ix = open_index(location)
    cid = ix.begin_crawl()
    diff = {"status": "significant", "added": ["new nest"], "removed": [], "kinds": ["text"]}
    ix.upsert("http://a/1", "A", "text one", relevance=0.25, depth=2, fetched_at=10.0)
    ix.upsert("http://a/2", "B", "text two", change="significant", diff=diff, crawl_id=cid)
    ix.upsert("http://a/2", "B", "text two again", change="significant")  # keeps its diff
    ix.end_crawl(cid, {"added": 2, "change/unchanged": 5})
    (last,) = ix.crawls(1)
    assert last["id"] == cid and last["counts"] == {"added": 2, "change/unchanged": 5}
    assert last["finished"] >= last["started"]
    crawl_id, changes = ix.last_changes()
    assert crawl_id == cid and [c["url"] for c in changes] == ["http://a/2"]
    assert changes[0]["change_diff"]["added"] == ["new nest"]
    assert ix.count_changes(cid) == 1
    pages = {p["url"]: p for p in ix.pages()}
    assert pages["http://a/1"]["text"] == "text one" and pages["http://a/1"]["depth"] == 2
    assert pages["http://a/2"]["change_diff"] == diff
    assert ix.summary()["pages"] == 2
    ix.close()


SQL_TITLES = [
    "Robert'); DROP TABLE focuscrawl_pages; --",
    "x' OR '1'='1",
    "eagle\\'; SELECT pg_sleep(10); --",
    "$$; DELETE FROM pages; $$",
]


def test_hostile_text(location: str) -> None:
    ix = open_index(location)
    for i, title in enumerate(SQL_TITLES):
        ix.upsert(f"http://h/{i}'--", title, f"hostile page {title}")
    ix.upsert("http://h/nul", "nul\x00title", "before\x00after eagle")
    # (one match: FTS5's snippet() over a page where each of a million words matches is slow)
    huge = "osprey " + ("wren " * (10 * 1024 * 1024 // 5 + 1))[: 10 * 1024 * 1024]
    ix.upsert("http://h/huge", "T" * (MAX_TITLE_CHARS * 10), huge)
    ix.commit()
    assert len(ix) == len(SQL_TITLES) + 2
    assert {h.title for h in ix.search("hostile", limit=20).hits} == set(SQL_TITLES)
    assert [h.url for h in ix.search("drop table").hits] == ["http://h/0'--"]
    (hit,) = ix.search("after").hits
    assert hit.title == "nul title" and "\x00" not in hit.snippet
    pages = {p["url"]: p for p in ix.pages()}
    assert len(pages["http://h/huge"]["text"]) == MAX_TEXT_CHARS
    assert len(pages["http://h/huge"]["title"]) == MAX_TITLE_CHARS
    assert [h.url for h in ix.search("osprey").hits] == ["http://h/huge"]
    assert ix.counts["nul_stripped"] == 2 and ix.counts["text_capped"] == 1
    assert ix.counts["title_capped"] == 1
    # a query that looks like SQL or tsquery syntax is words, nothing more
    for query in ["'; DROP TABLE x; --", "a & !b | c:*", "eagle <-> (nest"]:
        ix.search(query)
    ix.close()


def test_pipeline_on_either_backend(location: str, tmp_path: Path) -> None:
    crawler = get_crawler(
        settings_dict={
            "FOCUSCRAWL_DATA_DIR": str(tmp_path),
            "FOCUSCRAWL_INDEX_URL": location,
            "FOCUSCRAWL_INDEX_COMMIT_EVERY": 2,
            "FOCUSCRAWL_INDEX_WRITER_THREAD": False,  # answers read at once, no reactor
        }
    )
    crawler.stats.open_spider()
    pipe = build_from_crawler(IndexPipeline, crawler)
    assert pipe.location == location
    pipe.open_spider()
    items = [page(n) for n in range(3)]
    answers = [pipe.process_item(item) for item in items]
    assert [answered(a) for a in answers[:2]] == [[items[0]], [items[1]]]
    assert answered(answers[2]) == []  # waits for its commit
    items.append(page(5, text="nul\x00byte"))
    answers.append(pipe.process_item(items[3]))
    pipe.process_item(page(1, "significant", relevant=False))  # left the topic
    pipe.close_spider()
    assert answered(answers[3]) == [items[3]]
    assert crawler.stats.get_value("focuscrawl/index/cleaned/nul_stripped") == 1
    ix = open_index(location, readonly=True)
    assert len(ix) == 3 and "http://t/1" not in ix
    assert ix.crawls(1)[0]["counts"]["removed"] == 1
    ix.close()


# --- PostgreSQL only ------------------------------------------------------------------------


def test_cli_migrate_search_status_export(tmp_path: Path, pg_url: str, capsys: Any) -> None:
    src = tmp_path / "index.sqlite"
    ix = open_index(src)
    cid = ix.begin_crawl()
    for n in range(30):
        ix.upsert(f"http://m/{n}", f"Page {n}", f"migrated heron number{n}", relevance=n / 30)
    ix.upsert("http://m/c", "Changed", "heron", change="significant", diff={"status": "significant", "added": ["x"]}, crawl_id=cid)  # fmt: skip
    ix.end_crawl(cid, {"added": 31})
    ix.commit()
    ix.close()
    password = pg_url.split(":")[2].split("@")[0]
    assert cli_main(["index", "migrate", str(src), pg_url]) == 0
    assert cli_main(["index", "migrate", str(src), pg_url]) == 0  # again: replaced, not doubled
    out = capsys.readouterr()
    assert "31 pages copied" in out.out and password not in out.out + out.err
    dst = open_index(pg_url, readonly=True)
    assert len(dst) == 31
    crawl_id, changes = dst.last_changes()
    assert [c["url"] for c in changes] == ["http://m/c"]
    assert next(c for c in dst.crawls() if c["id"] == crawl_id)["counts"] == {"added": 31}
    dst.close()
    assert cli_main(["search", "heron number29", "--index", pg_url, "--json"]) == 0
    assert '"url": "http://m/29"' in capsys.readouterr().out
    assert cli_main(["status", "--index", pg_url]) == 0
    out = capsys.readouterr().out
    assert "31 pages" in out and password not in out and "***" in out
    assert cli_main(["export-es", "--index", pg_url, "-o", str(tmp_path / "bulk.jsonl")]) == 0
    assert len((tmp_path / "bulk.jsonl").read_text().splitlines()) == 62


def test_credentials_never_printed(pg_server: Any, caplog: Any) -> None:
    wrong = pg_server.url(password="not-the-password-9q")
    with pytest.raises(IndexUnavailable) as err:
        open_index(wrong)
    assert "not-the-password-9q" not in str(err.value) and "***" in str(err.value)
    assert describe(wrong) == wrong.replace("not-the-password-9q", "***")
    assert "not-the-password-9q" not in caplog.text
    assert is_postgres("postgres://h/db") and not is_postgres("/data/postgresql://x")


def test_two_writers_at_once(pg_url: str) -> None:
    """Two workers write overlapping pages in opposite orders: every page once, none lost
    (a deadlock between their transactions is retried, not an error)."""
    urls = [f"http://w/{n}" for n in range(120)]
    errors: list[BaseException] = []

    def worker(order: list[str], name: str) -> None:
        try:
            ix = open_index(pg_url)
            for i, url in enumerate(order):
                ix.upsert(url, name, f"shared words {name} {url}", relevance=0.5)
                if i % 16 == 15:
                    ix.commit()
            ix.commit()
            ix.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=worker, args=(urls, "one")),
        threading.Thread(target=worker, args=(urls[::-1], "two")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    ix = open_index(pg_url, readonly=True)
    assert len(ix) == len(urls)
    assert len(ix.search("shared", limit=1000).hits) == len(urls)
    ix.close()


WRITER = """
import sys
from focuscrawl.index.backend import open_index
ix = open_index(sys.argv[1])
for n in range(20):
    ix.upsert(f"http://k/{n}", "Kept", f"committed page{n}")
ix.commit()
for n in range(20, 40):
    ix.upsert(f"http://k/{n}", "Lost", f"uncommitted page{n}")
print("in transaction", flush=True)
sys.stdin.read()
"""


def test_writer_sigkilled_mid_transaction(pg_url: str) -> None:
    """A worker killed with its transaction open: what it committed is there, whole; what it
    had not is not (those pages were never acknowledged: a resumed crawl fetches them)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "harness")])}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, pg_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "in transaction"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    for pipe in (proc.stdin, proc.stdout):
        assert pipe is not None
        pipe.close()
    ix = open_index(pg_url)
    assert len(ix) == 20 and {h.title for h in ix.search("page*", limit=100).hits} == {"Kept"}
    ix.upsert("http://k/20", "Again", "fetched again")  # the killed worker's rows hold no lock
    ix.commit()
    ix.close()


class _Waiting(logging.Handler):
    """Sets ``event`` when the index says it is waiting for a lost server."""

    def __init__(self) -> None:
        super().__init__()
        self.event = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "connection lost" in record.getMessage():
            self.event.set()


def test_server_restarted_mid_crawl(pg_server: Any, pg_url: str, tmp_path: Path) -> None:
    """The server goes down with a transaction open: the crawl waits, reconnects, replays the
    transaction; every item is answered only once it is committed, none lost."""
    crawler = get_crawler(
        settings_dict={
            "FOCUSCRAWL_DATA_DIR": str(tmp_path),
            "FOCUSCRAWL_INDEX_URL": pg_url,
            "FOCUSCRAWL_INDEX_COMMIT_EVERY": 10,
            "FOCUSCRAWL_INDEX_WRITER_THREAD": False,  # the inline path: answers at once
        }
    )
    crawler.stats.open_spider()
    pipe = build_from_crawler(IndexPipeline, crawler)
    pipe.open_spider()
    answers = [pipe.process_item(page(n)) for n in range(15)]  # 10 committed, 5 open
    assert all(answered(a) for a in answers[:10]) and not any(answered(a) for a in answers[10:])
    pg_server.stop()  # fast shutdown: the connection is cut
    handler = _Waiting()
    logger = logging.getLogger("focuscrawl.index.pgstore")
    logger.addHandler(handler)
    done = threading.Event()
    errors: list[BaseException] = []

    def more() -> None:
        try:
            answers.extend(pipe.process_item(page(n)) for n in range(15, 25))  # commits at 20
        except BaseException as exc:
            errors.append(exc)
        done.set()

    writer = threading.Thread(target=more)
    writer.start()
    try:
        assert handler.event.wait(timeout=60), "the index never said it waits"
        assert not done.is_set()  # paused, not failed
    finally:
        pg_server.start()
        logger.removeHandler(handler)
    writer.join(timeout=120)
    assert errors == [] and done.is_set()
    pipe.close_spider()
    assert [len(answered(a)) for a in answers] == [1] * 25  # answered, none errbacked
    assert pipe.index is None and pipe.failed is None
    ix = open_index(pg_url, readonly=True)
    assert len(ix) == 25
    ix.close()


def test_unreachable_server_stops_the_write_after_the_retry_timeout(pg_url: str) -> None:
    from focuscrawl.index.pgstore import PostgresIndex

    ix = PostgresIndex.open(pg_url, retry_timeout=0.3)
    ix.upsert("http://u/1", "U", "text")
    ix.commit()
    ix._conn.close()  # as if the server went away for good: connections refused next
    ix.url = ix.url.rsplit(":", 1)[0] + ":1/nowhere"
    with pytest.raises(IndexUnavailable, match="no connection for 0.3s"):
        ix.upsert("http://u/2", "U", "text")
    ix.close()


def test_serve_reads_either_backend(location: str) -> None:
    """``focuscrawl serve --index PATH|URL``: the search API and the dashboard's index figures."""
    import json
    import urllib.request

    from focuscrawl.web.app import Sources, make_server

    ix = open_index(location)
    cid = ix.begin_crawl()
    ix.upsert("http://s/eagle", "Eagle <b>", "the bald eagle eats fish", relevance=0.9)
    ix.end_crawl(cid, {"added": 1})
    ix.close()
    server = make_server(Sources(index=location))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        base = server.url.rstrip("/")
        with urllib.request.urlopen(base + "/api/search?q=eagle", timeout=30) as r:
            hits = json.loads(r.read())["hits"]
        with urllib.request.urlopen(base + "/api/dashboard", timeout=30) as r:
            dashboard = json.loads(r.read())
    finally:
        server.shutdown()
        server.server_close()
    assert [h["url"] for h in hits] == ["http://s/eagle"]
    assert dashboard["indexed"] == 1


def test_an_items_failed_update_is_undone_alone(pg_url: str) -> None:
    """The pipeline's per-item savepoint on PostgreSQL: a bad update (a depth past PostgreSQL's
    integer) fails alone; the transaction's other updates are kept and committed."""
    from focuscrawl.index.backend import IndexStoreError

    ix = open_index(pg_url)
    ix.savepoint()
    ix.upsert("http://r/a", "A", "kept before")
    ix.release()
    ix.savepoint()
    ix.upsert("http://r/b", "B", "undone")
    with pytest.raises(IndexStoreError, match="out of range"):
        ix.upsert("http://r/c", "C", "bad", depth=2**40)
    ix.rollback_to()
    ix.savepoint()
    ix.upsert("http://r/d", "D", "kept after")
    ix.release()
    ix.commit()
    assert sorted(p["url"] for p in ix.pages()) == ["http://r/a", "http://r/d"]
    ix.close()


# --- pipelined batches: a transaction's writes sent with its COMMIT ------------------------


def test_a_refused_write_in_a_pipelined_batch_is_undone_alone(pg_url: str) -> None:
    """The batch goes in one pipeline; a write the server refuses (a depth past its integer)
    is undone alone: the batch is replayed without it, the others committed."""
    from focuscrawl.index.backend import IndexStoreError, QueuedWrites
    from focuscrawl.index.pgstore import PostgresIndex

    ix = PostgresIndex.open(pg_url)
    assert isinstance(ix, QueuedWrites)
    ix.queue_upsert("http://q/a", "A", "kept before")
    ix.queue_upsert("http://q/b", "B", "refused", depth=2**40)
    ix.queue_remove("http://q/none")
    ix.queue_upsert("http://q/c", "C", "kept after")
    outcomes = ix.flush()
    assert outcomes[0] is True and outcomes[2:] == [False, True]
    assert isinstance(outcomes[1], IndexStoreError) and "out of range" in str(outcomes[1])
    assert ix.counts["batches_refused"] == 1 and ix.counts["refused"] == 1
    assert sorted(p["url"] for p in ix.pages()) == ["http://q/a", "http://q/c"]
    ix.queue_upsert("http://q/a", "A2", "replaced")
    ix.queue_remove("http://q/c")
    assert ix.flush() == [False, True]  # the next batch is pipelined again
    assert ix.counts["pipelined_batches"] == 1 and ix.counts["batches_refused"] == 1
    ix.close()
    ro = open_index(pg_url, readonly=True)
    assert [h.title for h in ro.search("replaced").hits] == ["A2"] and len(ro) == 1
    ro.close()


def test_the_text_and_vectors_are_compressed_with_lz4(pg_url: str) -> None:
    """pglz was a seventh of the server's CPU per page: the text and vectors are lz4's (set
    once, on open, where the server has it: Debian's PostgreSQL does)."""
    from focuscrawl.index import pgschema
    from focuscrawl.index.pgstore import PostgresIndex

    ix = PostgresIndex.open(pg_url)
    rng = random.Random(1)  # many lexemes: a tsvector worth compressing
    words = ["".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(3000)]
    ix.upsert("http://z/1", "Eagles", "eagles nest on cliffs " + " ".join(words))
    ix.commit()
    got = ix._conn.execute(
        "SELECT pg_column_compression(body), pg_column_compression(tsv) FROM focuscrawl_pages"
    ).fetchone()
    assert got == ("lz4", "lz4")
    names = ix._conn.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = 'focuscrawl_pages'::regclass"
        " AND attcompression = 'l' ORDER BY attname"
    ).fetchall()
    assert [n for (n,) in names] == sorted(pgschema.LZ4_COLUMNS)
    ix._conn.rollback()
    ix.close()
    again = PostgresIndex.open(pg_url)  # nothing left to alter: no lock taken
    assert [h.url for h in again.search("cliffs").hits] == ["http://z/1"]
    again.close()


def _rows(ix: Any) -> list[tuple[Any, ...]]:
    """Every page's columns but its index time, and its vectors as text, by URL."""
    rows = ix._conn.execute(
        "SELECT url, title, body, relevance, authority, depth, fetched_at, change, change_diff,"
        " changed_at, changed_in, tsv::text, title_tsv::text FROM focuscrawl_pages ORDER BY url"
    ).fetchall()
    ix._conn.rollback()
    return rows


def test_a_batch_of_upserts_goes_in_few_statements_as_the_writes_one_by_one(
    pg_server: Any, pg_url: str
) -> None:
    """Queued upserts are sent several pages to a statement (focuscrawl/index/pgbatch.py); the
    rows and each write's outcome are those of the same writes sent one at a time: new and
    replaced pages, a URL twice in a batch, a removal between two upserts of its URL, kept
    and given authority, a diff (and none: the last one kept), text the server parses."""
    from focuscrawl.index.pgstore import PostgresIndex

    diff = {"status": "significant", "added": ["eagles nest"]}
    writes: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("upsert", ("http://b/1", "Eagles", "eagles nest high"), {"relevance": 0.5}),
        ("upsert", ("http://b/2", "Owls", "owls hunt at night"), {"authority": 0.25}),
        ("upsert", ("http://b/3", "Tag", "a <b>bold</b> owl"), {"depth": 3}),  # server-built
        ("upsert", ("http://b/1", "Eagles 2", "eagles again"), {"diff": diff, "fetched_at": 3}),
        ("remove", ("http://b/2",), {}),
        ("upsert", ("http://b/2", "Owls 2", "owls again"), {}),
        ("upsert", ("http://b/4", "Kites", "kites soar"), {"authority": 0.75, "fetched_at": 5}),
        ("upsert", ("http://b/5", "Hawks", "hawks"), {"diff": diff, "changed_at": 7.0}),
    ]
    second = writes[:3] + [  # the same pages again: replaced, diff kept, authority kept
        ("upsert", ("http://b/1", "Eagles 3", "eagles"), {}),
        ("upsert", ("http://b/4", "Kites 3", "kites"), {}),
        ("upsert", ("http://b/5", "Hawks 3", "hawks"), {"authority": 0.5}),
    ]
    with psycopg_connect(pg_server.url()) as conn:
        conn.execute(f"CREATE DATABASE {pg_url.rsplit('/', 1)[1]}_one")
    one_url = pg_url + "_one"
    results = {}
    for name, url in (("batched", pg_url), ("one", one_url)):
        ix = PostgresIndex.open(url)
        outcomes = []
        for batch in (writes, second):
            if name == "batched":
                for kind, args, fields in batch:
                    getattr(ix, f"queue_{kind}")(*args, **fields)
                outcomes.append(ix.flush())
            else:
                outcomes.append(
                    [getattr(ix, kind)(*args, **fields) for kind, args, fields in batch]
                )
                ix.commit()
        results[name] = (outcomes, _rows(ix), dict(ix.counts))
        ix.close()
    batched, one = results["batched"], results["one"]
    assert batched[0] == one[0]
    assert batched[0][0] == [True, True, True, False, True, True, True, True]
    assert batched[1] == one[1] and len(one[1]) == 5
    # a run of upserts is split by a URL twice, a removal and a change of the authority flag
    # (kept or given): 7 statements for the first batch's 8 writes, 4 for the second's 6
    assert batched[2]["batch_statements"] == 7 + 4
    assert batched[2]["fts_server_parsed"] == one[2]["fts_server_parsed"] == 2
    ix = PostgresIndex.open(pg_url)
    for i in range(300):  # as the crawl's pipeline queues them: one statement per 256 pages
        ix.queue_upsert(f"http://b/new/{i}", "Swifts", f"swifts {i}")
    assert ix.flush() == [True] * 300
    assert ix.counts["batch_statements"] == 2
    ix.close()


def psycopg_connect(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_pipeline_answers_a_refused_item_alone(pg_url: str, tmp_path: Path) -> None:
    """Through IndexPipeline: the refused item's answer fails, the batch's others are answered
    after the commit, and the counts say which."""
    from focuscrawl.index.backend import IndexStoreError

    crawler = get_crawler(
        settings_dict={
            "FOCUSCRAWL_DATA_DIR": str(tmp_path),
            "FOCUSCRAWL_INDEX_URL": pg_url,
            "FOCUSCRAWL_INDEX_COMMIT_EVERY": 4,
            "FOCUSCRAWL_INDEX_WRITER_THREAD": False,  # the inline path: answers at once
        }
    )
    crawler.stats.open_spider()
    pipe = build_from_crawler(IndexPipeline, crawler)
    pipe.open_spider()
    bad = page(2)
    bad.depth = 2**40
    items = [page(0), page(1), bad, page(9, relevant=False)]
    failures: list[Any] = []
    answers = [pipe.process_item(item) for item in items[:3]]
    answers[2].deferred.addErrback(failures.append)
    assert [answered(a) for a in answers] == [[], [], []]  # nothing sent before the commit
    answers.append(pipe.process_item(items[3]))  # the 4th: the batch is committed
    assert [answered(a) for a in (answers[0], answers[1], answers[3])] == [
        [items[0]],
        [items[1]],
        [items[3]],
    ]
    assert len(failures) == 1 and failures[0].check(IndexStoreError)
    pipe.close_spider()
    assert pipe.failed is None
    assert crawler.stats.get_value("focuscrawl/index/refused") == 1
    assert crawler.stats.get_value("focuscrawl/index/added") == 2
    assert crawler.stats.get_value("focuscrawl/index/removed") is None  # nothing was there
    ix = open_index(pg_url, readonly=True)
    assert sorted(p["url"] for p in ix.pages()) == ["http://t/0", "http://t/1"]
    ix.close()


def test_server_restarted_mid_pipelined_batch_replays_it(pg_server: Any, pg_url: str) -> None:
    """The server goes down while a pipelined batch is on it (held on a row lock, its writes
    before that one done, the COMMIT not reached): the flush waits for the server, replays the
    whole transaction (the statements run before the batch too) and answers only once the
    server has committed it."""
    import time

    import psycopg

    from focuscrawl.index.pgstore import PostgresIndex

    ix = PostgresIndex.open(pg_url, retry_timeout=120)
    ix.upsert("http://b/locked", "L1", "first version")
    ix.commit()
    locker = psycopg.connect(pg_url)
    locker.execute("SELECT 1 FROM focuscrawl_pages WHERE url = 'http://b/locked' FOR UPDATE")
    ix.upsert("http://b/direct", "D", "a write of the open transaction, sent at once")
    for n in range(10):
        ix.queue_upsert(f"http://b/{n}", "Q", f"queued page{n}")
    ix.queue_upsert("http://b/locked", "L2", "second version")  # waits for the locker
    for n in range(10, 20):
        ix.queue_upsert(f"http://b/{n}", "Q", f"queued page{n}")
    handler = _Waiting()
    logger = logging.getLogger("focuscrawl.index.pgstore")
    logger.addHandler(handler)
    result: list[Any] = []
    flusher = threading.Thread(target=lambda: result.append(ix.flush()))
    flusher.start()
    try:
        with psycopg.connect(pg_url, autocommit=True) as watch:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # queries, no sleep: until the batch waits
                (waiting,) = watch.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND datname = current_database()"
                ).fetchone()
                if waiting:
                    break
            assert waiting == 1, "the batch never reached the locked row"
        pg_server.stop()  # fast shutdown: the batch's and the locker's connections are cut
        assert handler.event.wait(timeout=60), "the index never said it waits"
        assert result == []  # waiting for the server, not answered
    finally:
        if pg_server.proc is None:
            pg_server.start()
        logger.removeHandler(handler)
        locker.close()
    flusher.join(timeout=120)
    (outcomes,) = result
    assert outcomes == [True] * 10 + [False] + [True] * 10
    assert ix.counts["reconnects"] >= 1 and ix.counts["replayed"] >= 22
    ix.close()
    ro = open_index(pg_url, readonly=True)
    assert len(ro) == 22 and [h.title for h in ro.search("second").hits] == ["L2"]
    ro.close()


def test_ranks_come_from_a_capped_scan_smaller_for_or(pg_url: str) -> None:
    """At most ``scan_cap`` text matches are ranked (a quarter of it for an OR fallback), plus
    the title matches, which are never lost to the cap."""
    from focuscrawl.index.pgsearch import OR_CAP_SHARE, scan_cap

    ix = open_index(pg_url)
    for n in range(40):
        ix.queue_upsert(f"http://c/{n}", f"Page {n}", f"a heron by the water number{n}")  # type: ignore[attr-defined]
    for n in range(3):
        ix.queue_upsert(f"http://c/t{n}", f"Heron {n}", "a title match")  # type: ignore[attr-defined]
    ix.commit()
    weights = RankWeights(scan_cap=20, candidates=1)
    assert scan_cap(weights, "and") == 20 and scan_cap(weights, "or") == 20 * OR_CAP_SHARE
    assert scan_cap(RankWeights(scan_cap=0), "or") is None  # 0: every match ranked
    titles = {f"http://c/t{n}" for n in range(3)}
    hits = ix.search("heron", limit=100, weights=weights).hits
    assert 20 <= len(hits) <= 23 and titles <= {h.url for h in hits}
    result = ix.search("heron zebra", limit=100, weights=weights)
    assert result.mode == "or" and 5 <= len(result.hits) <= 8
    assert titles <= {h.url for h in result.hits}
    assert len(ix.search("heron", limit=100, weights=RankWeights(scan_cap=0)).hits) == 43
    ix.close()


def test_tsvector_kept_in_the_row_and_sampled_finely(pg_url: str) -> None:
    """The schema keeps the tsvector in the row (STORAGE MAIN: a ranked match needs no TOAST
    lookup) with statistics target 1000 (the idf's common lexemes); a second writer's open
    leaves them as they are."""
    import psycopg

    from focuscrawl.index.pgschema import TSV_STATISTICS

    for _ in range(2):
        open_index(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT attstorage::text, attstattarget FROM pg_attribute"
            " WHERE attrelid = 'focuscrawl_pages'::regclass AND attname = 'tsv'"
        ).fetchone()
    assert row == ("m", TSV_STATISTICS)


def test_writer_thread_sends_queued_batches_off_the_reactor(pg_url: str) -> None:
    """FOCUSCRAWL_INDEX_WRITER_THREAD on PostgreSQL: the thread queues a batch's writes and
    sends them with the COMMIT; each answer (handed to the reactor: here the test) says what
    its write did, a refused write fails its item alone."""
    from focuscrawl.index.backend import IndexStoreError
    from focuscrawl.index.pgstore import PostgresIndex
    from focuscrawl.pipelines.queued_writer import QueuedIndexWriter
    from tests.test_index_writer import Handed, results

    index = PostgresIndex.open(pg_url)
    index.upsert("http://w/old", "Old", "there before")
    index.commit()
    handed = Handed()
    writer = QueuedIndexWriter(index, None, commit_every=4, commit_delay=30.0, deliver=handed)
    writer.start()

    def put(url: str, depth: int = 0) -> Any:
        def update(ix: Any) -> str:
            ix.queue_upsert(url, "T", "queued words", depth=depth)
            return "upsert"

        return update

    def drop(url: str) -> Any:
        def update(ix: Any) -> str:
            ix.queue_remove(url)
            return "remove"

        return update

    got = results(
        [
            writer.submit(put("http://w/new")),
            writer.submit(put("http://w/bad", depth=2**40)),
            writer.submit(put("http://w/old")),
            writer.submit(drop("http://w/gone")),
        ]
    )
    handed.run_one()  # the batch's hand-over, after its commit
    assert got[0] == "added" and got[2] == "replaced" and got[3] is None
    assert got[1].check(IndexStoreError)
    writer.close()
    assert writer.batches == 1 and index.counts["pipelined_batches"] == 0  # replayed one by one
    assert sorted(p["url"] for p in index.pages()) == ["http://w/new", "http://w/old"]
    index.close()
