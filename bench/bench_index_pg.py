"""The index on PostgreSQL beside the SQLite index (issue 30): indexing cost, search quality,
query latency, the index pipeline's throughput. Prints each figure for both and the ratio.

* indexing: ``--pages`` pages (Wikispeedia paragraphs, as bench_index.py) upserted and committed
  every 64 (the pipeline's default), wall and CPU per page: this process's, and on PostgreSQL
  the server's (all its processes, the GIN pending lists merged at the end: the work the
  inserts left for later); ``--cost-rounds`` rounds of SQLite then each of ``--pg-ways``
  (alternated: the load moves), medians; target PG client + server ≤ 1.5× SQLite;
* search quality: the shared search-quality bench (bench_search_quality.py: same corpus,
  queries and judgements) on both, nDCG@10 per ranking; target |PG - SQLite| ≤ 0.02;
* latency: 300 queries of 1-3 words at ``--latency-pages`` pages, p50/p99 wall and client CPU
  (PostgreSQL's own CPU is in the server process: the wall time includes it); target p99 < 50 ms;
* pipeline: items through ``IndexPipeline`` (commit every 64, answered at commit), items/s.

PostgreSQL is a cluster of the bench's own (initdb on a free loopback port, as the tests do:
tests/pg_server.py), or ``--pg-url``'s database (its ``focuscrawl_*`` tables are replaced).

    .venv/bin/python bench/bench_index_pg.py [--pages 5000] [--latency-pages 20000] [--quality]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_index import PageMaker, corpus_paragraphs, pct, query_words  # noqa: E402
from focuscrawl.index import RankWeights  # noqa: E402
from focuscrawl.index.backend import IndexStore, QueuedWrites, open_index  # noqa: E402

COMMIT_EVERY = 64


def fresh_pg(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + "/" + name


def fill(ix: IndexStore, maker: PageMaker, n: int, *, direct: bool = False) -> tuple[float, float]:
    """Seconds of wall and CPU to upsert ``n`` pages, committing every COMMIT_EVERY, as the
    pipeline writes: a store of QueuedWrites (PostgreSQL) gets each batch with its commit
    (``direct``: a round trip per page instead, as before the pipelined batches)."""
    queued = isinstance(ix, QueuedWrites) and not direct
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(n):
        url, title, text, rel = maker.page(i)
        if queued:
            ix.queue_upsert(url, title, text, relevance=rel)  # type: ignore[attr-defined]
        else:
            ix.upsert(url, title, text, relevance=rel)
        if i % COMMIT_EVERY == COMMIT_EVERY - 1:
            ix.commit()
    ix.commit()
    return time.perf_counter() - t0, time.process_time() - c0


class ServerCPU:
    """CPU seconds the bench's own PostgreSQL cluster used (0 for ``--pg-url``'s server)."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def __call__(self) -> float:
        return self.server.cpu_seconds() if self.server is not None else 0.0


def latency(
    ix: IndexStore, queries: list[str], server_cpu: Callable[[], float]
) -> tuple[list[float], list[float], float]:
    """Per query wall and client CPU (ms); the server's CPU per query (ms, a mean: /proc
    counts in clock ticks, too coarse for one query)."""
    ix.search(queries[0])
    wall, cpu = [], []
    s0 = server_cpu()
    for q in queries:
        t0, c0 = time.perf_counter(), time.thread_time()
        ix.search(q, limit=10, weights=RankWeights())
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    return wall, cpu, (server_cpu() - s0) * 1000 / len(queries)


def pipeline_rate(location: str, tmp: Path, maker: PageMaker, n: int) -> tuple[float, float]:
    """Items per second through IndexPipeline (every item answered at its commit), and the
    client's CPU seconds per item."""
    from scrapy.utils.misc import build_from_crawler
    from scrapy.utils.test import get_crawler

    from focuscrawl.items import PageItem
    from focuscrawl.pipelines.index import IndexPipeline

    crawler = get_crawler(
        settings_dict={"FOCUSCRAWL_DATA_DIR": str(tmp), "FOCUSCRAWL_INDEX_URL": location}
    )
    crawler.stats.open_spider()
    pipe = build_from_crawler(IndexPipeline, crawler)
    pipe.open_spider()
    items = []
    for i in range(n):
        url, title, text, rel = maker.page(i, version=3)
        items.append(
            PageItem(url=url, title=title, text=text, relevance=rel, relevant=True, change="new")
        )
    t0, c0 = time.perf_counter(), time.process_time()
    for item in items:
        pipe.process_item(item)
    pipe.close_spider()
    return n / (time.perf_counter() - t0), (time.process_time() - c0) / n


def row(name: str, sqlite: float, pg: float, unit: str, target: str = "") -> None:
    ratio = pg / sqlite if sqlite else float("nan")
    print(
        f"  {name:<34} SQLite {sqlite:9.3f} {unit:<6} PG {pg:9.3f} {unit:<6} PG/SQLite {ratio:5.2f}x {target}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pages", type=int, default=5000, help="pages for the indexing cost (0: no costs)"
    )
    ap.add_argument("--latency-pages", type=int, default=20_000, help="index size for latency")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--cost-rounds", type=int, default=3, help="SQLite then PG, alternated")
    ap.add_argument(
        "--pg-ways",
        default="client,server",
        help=f"PostgreSQL ways in the cost rounds, of {','.join(PG_WAYS)}",
    )
    ap.add_argument("--pipeline-items", type=int, default=3000)
    ap.add_argument("--quality", action="store_true", help="also run the search-quality bench")
    ap.add_argument("--crawl-pages", type=int, default=600, help="pages per crawl (0: no crawl)")
    ap.add_argument("--crawl-rounds", type=int, default=2)
    ap.add_argument(
        "--pg-writer-thread",
        action="store_true",
        help="the PostgreSQL crawls with FOCUSCRAWL_INDEX_WRITER_THREAD (batches off the reactor)",
    )
    ap.add_argument(
        "--pg-server-tsvector",
        action="store_true",
        help="the PostgreSQL crawls with FOCUSCRAWL_INDEX_CLIENT_TSVECTOR=False (server-built)",
    )
    ap.add_argument("--pg-url", default="", help="an admin URL of an existing server")
    ap.add_argument(
        "--no-fsync", action="store_true", help="the bench's cluster with fsync off (as the tests')"
    )
    args = ap.parse_args(argv)
    server: Any = None
    admin = args.pg_url
    if not admin:
        from tests.pg_server import PostgresServer

        server = PostgresServer(durable=not args.no_fsync)
        server.init()
        server.start()
        admin = server.url()
        print(f"PostgreSQL cluster of the bench's own, fsync {'off' if args.no_fsync else 'on'}")
    try:
        return run(args, admin, ServerCPU(server))
    finally:
        if server is not None:
            server.remove()


def run(args: argparse.Namespace, admin: str, server_cpu: ServerCPU) -> int:
    if args.pages > 0:
        costs(args, admin, server_cpu)
    if args.crawl_pages:
        extra = ["-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=True"] if args.pg_writer_thread else []
        if args.pg_server_tsvector:
            extra += ["-s", "FOCUSCRAWL_INDEX_CLIENT_TSVECTOR=False"]
        crawl(admin, args.crawl_pages, args.crawl_rounds, server_cpu, extra)
    if args.quality:
        quality(admin)
    return 0


GIN_INDEXES = ("focuscrawl_pages_tsv", "focuscrawl_pages_title_tsv")


def merge_pending(ix: IndexStore) -> None:
    """Merge the GIN indexes' pending lists into the indexes (the work their inserts left for
    later, counted in the run that left it: a fill's cost is then the same whatever the part
    of the last pending list still waiting)."""
    conn = ix._conn  # type: ignore[attr-defined]
    for name in GIN_INDEXES:
        conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (name,))
    conn.commit()


#: the PostgreSQL ways of indexing a page that a cost round measures beside SQLite
PG_WAYS = {
    "client": "tsvectors built by the crawler (compiled steps), batched statements",
    "python": "tsvectors built by the crawler, pure-Python steps",
    "server": "tsvectors built by the server (to_tsvector)",
    "direct": "client tsvectors, one statement and round trip per page",
    "async": "as client, synchronous_commit off (commits not flushed: NOT the index's"
    " durability; what the flush costs)",
}


def pg_cost(
    admin: str, maker: PageMaker, n: int, server_cpu: ServerCPU, way: str
) -> tuple[float, float, float]:
    """Wall, client CPU and server CPU (seconds) of filling a fresh database with ``n`` pages,
    the GIN pending lists merged at the end."""
    from focuscrawl.index import compiled

    url = fresh_pg(admin, f"bench_cost_{way}")
    if way == "async":
        url += "?options=-csynchronous_commit%3Doff"
    db = open_index(url)
    db.client_tsv = db.client_tsv and way != "server"  # type: ignore[attr-defined]
    loaded = list(compiled._loaded)
    if way == "python":
        compiled._loaded[:] = [None]
    try:
        s0 = server_cpu()
        t0, c0 = time.perf_counter(), time.process_time()
        fill(db, maker, n, direct=way == "direct")
        merge_pending(db)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        server = server_cpu() - s0
    finally:
        compiled._loaded[:] = loaded
    db.close()
    return wall, cpu, server


def costs(args: argparse.Namespace, admin: str, server_cpu: ServerCPU) -> None:
    """Indexing cost, query latency and the index pipeline's rate on both backends."""
    import os
    import statistics

    rng = random.Random(42)
    paras = corpus_paragraphs()
    maker = PageMaker(paras)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ways = [w for w in PG_WAYS if w in args.pg_ways.split(",")]
        print(
            f"indexing {args.pages} pages (commit every {COMMIT_EVERY}), {args.cost_rounds}"
            f" rounds of SQLite then each PostgreSQL way ({', '.join(ways)}), load"
            f" {os.getloadavg()[0]:.1f} at the start:"
        )
        lite: list[tuple[float, float]] = []
        pg: dict[str, list[tuple[float, float, float]]] = {w: [] for w in ways}
        ms = 1000 / args.pages
        for r in range(args.cost_rounds):
            ix = open_index(tmp / f"cost{r}.sqlite")
            lite.append(fill(ix, maker, args.pages))
            ix.close()
            line = f"  round {r + 1}: SQLite {lite[-1][1] * ms:.3f} ms CPU"
            for way in ways:
                pg[way].append(pg_cost(admin, maker, args.pages, server_cpu, way))
                wall, cpu, server = pg[way][-1]
                line += f"; PG {way} {cpu * ms:.3f} + {server * ms:.3f}"
            print(line + f" (load {os.getloadavg()[0]:.1f})")
        lite_wall = statistics.median(w for w, _ in lite)
        lite_cpu = statistics.median(c for _, c in lite)
        print(f"  medians of {args.cost_rounds} rounds (PG: client + server CPU):")
        for way in ways:
            print(f"  PG {way}: {PG_WAYS[way]}")
            rows = pg[way]
            row(
                "  wall per page",
                lite_wall * ms,
                statistics.median(w for w, _, _ in rows) * ms,
                "ms",
            )
            row(
                "  client CPU per page",
                lite_cpu * ms,
                statistics.median(c for _, c, _ in rows) * ms,
                "ms",
            )
            row(
                "  server CPU per page",
                lite_cpu * ms,
                statistics.median(s for _, _, s in rows) * ms,
                "ms",
            )
            row(
                "  client + server CPU per page",
                lite_cpu * ms,
                statistics.median(c + s for _, c, s in rows) * ms,
                "ms",
                "(target <= 1.5x)" if way == "client" else "",
            )
        ratios = (
            [(c + s) / lc for (_, c, s), (_, lc) in zip(pg[ways[0]], lite, strict=True)]
            if ways
            else []
        )
        if ratios:
            print(f"  PG {ways[0]} / SQLite per round: " + ", ".join(f"{x:.2f}x" for x in ratios))
        if args.latency_pages <= 0:
            return

        print(f"query latency at {args.latency_pages} pages, {args.queries} queries of 1-3 words:")
        words = query_words(paras, rng)
        queries = [
            " ".join(rng.sample(words, rng.choice((1, 2, 2, 3)))) for _ in range(args.queries)
        ]
        sizes: dict[str, tuple[list[float], list[float], float]] = {}
        for name, location in (
            ("sqlite", str(tmp / "latency.sqlite")),
            ("pg", fresh_pg(admin, "bench_latency")),
        ):
            ix = open_index(location)
            fill(ix, maker, args.latency_pages)
            ix.optimize()
            sizes[name] = latency(ix, queries, server_cpu if name == "pg" else lambda: 0.0)
            ix.close()
        for label, k in (("wall", 0), ("CPU (client)", 1)):
            for p in (50, 99):
                row(
                    f"{label} p{p}",
                    pct(sizes["sqlite"][k], p),
                    pct(sizes["pg"][k], p),
                    "ms",
                    "(target p99 < 50 ms)" if (label, p) == ("wall", 99) else "",
                )
        print(f"  server CPU per query (mean)          PG {sizes['pg'][2]:9.3f} ms")

        print(f"index pipeline, {args.pipeline_items} new relevant items:")
        lite_rate, lite_item_cpu = pipeline_rate(
            str(tmp / "pipe.sqlite"), tmp, maker, args.pipeline_items
        )
        pipe_url = fresh_pg(admin, "bench_pipe")
        s0 = server_cpu()
        pg_rate, pg_item_cpu = pipeline_rate(pipe_url, tmp, maker, args.pipeline_items)
        pg_item_server = (server_cpu() - s0) / args.pipeline_items
        row("items/s", lite_rate, pg_rate, "/s")
        row("client CPU per item", lite_item_cpu * 1000, pg_item_cpu * 1000, "ms")
        row(
            "client + server CPU per item",
            lite_item_cpu * 1000,
            (pg_item_cpu + pg_item_server) * 1000,
            "ms",
        )


def crawl(
    admin: str, pages: int, rounds: int, server_cpu: Callable[[], float], pg_extra: list[str]
) -> None:
    """``scrapy crawl topical`` of the synthetic test web with each index, alternating; pages/s
    (Scrapy's stats), the crawl's CPU seconds per page and the database server's."""
    import json
    import os
    import resource
    import statistics

    from focuseval.testweb import TestWebProcess

    from bench.bench_crawl import COMMON, pages_per_s, run_stats
    from focuscrawl.netguard import allow_private_args

    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    rates: dict[str, list[float]] = {"sqlite": [], "pg": []}
    cpu: dict[str, list[float]] = {"sqlite": [], "pg": [], "server": []}
    with TestWebProcess(corpus="synthetic") as web, tempfile.TemporaryDirectory() as tmp:
        topic = Path(tmp) / "topic.toml"
        seeds = web.seeds["birds"]
        topic.write_text(f'name = "birds"\nkeywords = ["birds"]\nseeds = {json.dumps(seeds)}\n')
        for r in range(rounds):
            for name in ("sqlite", "pg"):
                stats = Path(tmp) / f"{name}{r}.json"
                index = str(Path(tmp) / f"{name}{r}.sqlite")
                extra: list[str] = []
                if name == "pg":
                    index = fresh_pg(admin, f"bench_crawl{r}")
                    extra = pg_extra
                cmd = [
                    sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}",
                    *COMMON,
                    "-s", f"CLOSESPIDER_PAGECOUNT={pages}",
                    "-s", f"FOCUSCRAWL_STATS_FILE={stats}",
                    "-s", f"FOCUSCRAWL_DATA_DIR={tmp}/data-{name}{r}",
                    "-s", f"FOCUSCRAWL_INDEX_URL={index}",
                    *extra,
                    *allow_private_args(web.hosts),
                ]  # fmt: skip
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                s0 = server_cpu()
                done = run_stats(cmd, stats, env, Path(__file__).parent.parent)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                fetched = max(1, done["response_received_count"])
                used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                cpu[name].append(used * 1000 / fetched)
                if name == "pg":
                    cpu["server"].append((server_cpu() - s0) * 1000 / fetched)
                rates[name].append(pages_per_s(done))
            print(
                f"  round {r + 1}: SQLite {rates['sqlite'][-1]:.1f} pages/s"
                f" ({cpu['sqlite'][-1]:.2f} ms CPU/page), PG {rates['pg'][-1]:.1f}"
                f" ({cpu['pg'][-1]:.2f} ms + server {cpu['server'][-1]:.2f} ms)"
            )
    print(f"crawl of the synthetic test web, {pages} pages, median of {rounds} rounds:")
    row(
        "pages/s",
        statistics.median(rates["sqlite"]),
        statistics.median(rates["pg"]),
        "/s",
        "(target >= 0.95x)",
    )
    row(
        "crawler CPU per page",
        statistics.median(cpu["sqlite"]),
        statistics.median(cpu["pg"]),
        "ms",
    )
    print(f"  PG server CPU per page (median)      {statistics.median(cpu['server']):9.3f} ms")


def quality(admin: str) -> None:
    from bench import bench_search_quality as sq

    results: dict[str, dict[tuple[int, str], float]] = {"sqlite": {}, "pg": {}}
    makers: dict[str, Callable[[Path], IndexStore] | None] = {
        "sqlite": None,
        "pg": lambda _folder: open_index(fresh_pg(admin, "bench_quality")),
    }
    for name, make in makers.items():
        print(f"\n== search quality, {name}")
        sq.main(["--topics", "8"], make_index=make, results=results[name])
    print("\nsearch quality (nDCG@10), PG against SQLite (target: within 0.02):")
    worst, deficit = 0.0, 0.0
    for key, lite in results["sqlite"].items():
        pg = results["pg"][key]
        worst, deficit = max(worst, abs(pg - lite)), max(deficit, lite - pg)
        print(
            f"  seeds {key[0]} {key[1]:<24} SQLite {lite:.3f}  PG {pg:.3f}  diff {pg - lite:+.3f}"
        )
    print(
        f"  largest difference {worst:.3f} ({'within' if worst <= 0.02 else 'ABOVE'} 0.02);"
        f" largest shortfall of PG {max(deficit, 0.0):.3f}"
    )


if __name__ == "__main__":
    sys.exit(main())
