"""Index benchmark: incremental update vs full rebuild, and query latency.

Pages are made from Wikispeedia paragraphs (three consecutive paragraphs per page, the corpus
cycled to reach the size; FOCUSCRAWL_CORPORA) or, without the corpus, from Zipf-distributed
synthetic words. For 10,000 and 100,000 pages it times

* a full rebuild: every page inserted into a new index (what an index without incremental
  update does after every recrawl);
* an incremental update of 1% and 10% of the pages (70% replaced, 15% new, 15% deleted), applied
  to the existing index as the IndexPipeline does (commit every 200 updates);

and at the largest size the latency of 300 queries (one to three words of mixed frequency,
10 results) with exact BM25 and with the default scan cap: p50 and p99, target p99 < 50 ms,
and how much of the exact top 10 the capped ranking keeps.

    .venv/bin/python bench/bench_index.py [--sizes 10000 100000] [--queries 300]
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from focuscrawl.index import PageIndex, RankWeights

COMMIT_EVERY = 200


def corpus_paragraphs() -> list[tuple[str, str]]:
    """(title, paragraph) pairs from Wikispeedia, or synthetic ones."""
    try:
        from focuseval.wikispeedia import WikispeediaCorpus, title_of

        corpus = WikispeediaCorpus.open()
        return [
            (title_of(n), p) for n in corpus.titles for p in corpus.paragraphs(n) if len(p) > 80
        ]
    except (FileNotFoundError, ImportError) as exc:
        print(f"(no Wikispeedia corpus: {exc}; using synthetic text)")
        rng = random.Random(1)
        letters = "abcdefghijklmnopqrstuvwxyz"
        vocab = sorted({"".join(rng.choices(letters, k=rng.randint(4, 9))) for _ in range(50_000)})
        cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))
        return [
            (f"Doc {i}", " ".join(rng.choices(vocab, cum_weights=cum, k=80))) for i in range(20_000)
        ]


class PageMaker:
    def __init__(self, paras: list[tuple[str, str]]) -> None:
        self.paras = paras

    def page(self, n: int, version: int = 0) -> tuple[str, str, str, float]:
        """URL, title, text, relevance of page ``n`` (a later ``version`` has other text)."""
        k = (n * 3 + version * 7919) % len(self.paras)
        title = f"{self.paras[k][0]} {n}"
        text = " ".join(self.paras[(k + j) % len(self.paras)][1] for j in range(3))
        return f"http://bench/{n}", title, text, ((n * 2654435761) % 1000) / 1000


def build(path: Path, maker: PageMaker, n: int) -> float:
    t0 = time.perf_counter()
    ix = PageIndex.open(path)
    for i in range(n):
        url, title, text, rel = maker.page(i)
        ix.upsert(url, title, text, relevance=rel)
        if i % COMMIT_EVERY == COMMIT_EVERY - 1:
            ix.commit()
    ix.commit()
    ix.close()
    return time.perf_counter() - t0


def changes(
    n: int, share: float, version: int, next_id: int, rng: random.Random
) -> Iterator[tuple[str, int]]:
    k = max(1, int(n * share))
    olds = rng.sample(range(n), k)
    n_new = int(k * 0.15)
    n_del = int(k * 0.15)
    for i in olds[:n_del]:
        yield "deleted", i
    for i in olds[n_del : k - n_new]:
        yield "significant", i
    for j in range(n_new):
        yield "new", next_id + j


def apply(path: Path, maker: PageMaker, plan: list[tuple[str, int]], version: int) -> float:
    t0 = time.perf_counter()
    ix = PageIndex.open(path)
    for done, (change, i) in enumerate(plan, 1):
        if change == "deleted":
            ix.remove(f"http://bench/{i}")
        else:
            url, title, text, rel = maker.page(i, version)
            ix.upsert(url, title, text, relevance=rel, change=change)
        if done % COMMIT_EVERY == 0:
            ix.commit()
    ix.commit()
    ix.close()
    return time.perf_counter() - t0


def query_words(paras: list[tuple[str, str]], rng: random.Random) -> list[str]:
    counts: Counter[str] = Counter()
    for _, p in paras[:20_000]:
        counts.update(w.lower() for w in p.split() if w.isalpha() and len(w) > 3)
    ranked = [w for w, _ in counts.most_common()]
    # a mix: frequent words (hard: long posting lists), mid and rare words
    mid, rare = ranked[200:5000], ranked[5000:]
    return (
        ranked[:200] + rng.sample(mid, min(300, len(mid))) + rng.sample(rare, min(300, len(rare)))
    )


def latency(
    path: Path, queries: list[str], weights: RankWeights
) -> tuple[list[float], list[float], list[list[str]]]:
    """Wall-clock and CPU milliseconds per query (SQLite runs on this thread: CPU time is what
    the query costs when the machine is shared), and the result URLs."""
    ix = PageIndex.open(path, readonly=True)
    times, cpu, results = [], [], []
    for q in queries:
        t0, c0 = time.perf_counter(), time.thread_time()
        hits = ix.search(q, limit=10, weights=weights).hits
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
        results.append([h.url for h in hits])
    ix.close()
    return times, cpu, results


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def run_latency(
    path: Path, paras: list[tuple[str, str]], n_queries: int, rng: random.Random
) -> None:
    """Latency of the index at ``path``: exact against capped BM25, wall-clock and CPU time."""
    words = query_words(paras, rng)
    queries = [" ".join(rng.sample(words, rng.choice((1, 2, 2, 3)))) for _ in range(n_queries)]
    latency(path, queries[:20], RankWeights())  # warm the page cache
    exact_t, exact_c, exact_r = latency(path, queries, RankWeights(scan_cap=0))
    capped_t, capped_c, capped_r = latency(path, queries, RankWeights())
    overlap = statistics.mean(
        len(set(a) & set(b)) / len(a) for a, b in zip(exact_r, capped_r, strict=True) if a
    )
    with PageIndex.open(path, readonly=True) as ix:
        n_pages = len(ix)
    print(f"query latency at {n_pages} pages ({n_queries} queries of 1-3 words, 10 results):")
    for name, times, cpu in (
        ("exact BM25 (scan_cap=0)", exact_t, exact_c),
        ("default (scan_cap=2000)", capped_t, capped_c),
    ):
        p50, p99 = pct(times, 50), pct(times, 99)
        verdict = "OK" if p99 < 50 else "ABOVE TARGET"
        print(
            f"  {name:<24} wall p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  max {max(times):6.1f} ms"
            f"  (p99 < 50 ms: {verdict});  CPU p50 {pct(cpu, 50):6.1f} ms  p99 {pct(cpu, 99):6.1f} ms"
        )
    print(f"  top-10 overlap of the capped ranking with the exact one: {overlap:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument(
        "--latency-only",
        type=Path,
        default=None,
        metavar="INDEX",
        help="only measure query latency on an existing index",
    )
    args = ap.parse_args(argv)
    rng = random.Random(42)
    t0 = time.perf_counter()
    paras = corpus_paragraphs()
    maker = PageMaker(paras)
    print(f"{len(paras)} source paragraphs ({time.perf_counter() - t0:.1f} s to read)")
    if args.latency_only:
        run_latency(args.latency_only, paras, args.queries, rng)
        return 0
    print(
        f"{'pages':>8} {'update':>7} {'changed':>8} {'incremental s':>14} {'rebuild s':>10} {'ratio':>7}"
        f" {'ms/changed page':>16}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"ix{n}.sqlite"
            rebuild = build(path, maker, n)
            next_id = n
            for version, share in enumerate((0.01, 0.10), 1):
                plan = list(changes(n, share, version, next_id, rng))
                next_id += sum(1 for c, _ in plan if c == "new")
                inc = apply(path, maker, plan, version)
                print(
                    f"{n:>8} {share:>7.0%} {len(plan):>8} {inc:>14.3f} {rebuild:>10.2f}"
                    f" {rebuild / inc:>6.0f}x {1000 * inc / len(plan):>16.3f}"
                )
            size_mb = path.stat().st_size / 1e6
            print(f"{n:>8} pages: index file {size_mb:.0f} MB, rebuild {n / rebuild:.0f} pages/s")
        run_latency(Path(tmp) / f"ix{args.sizes[-1]}.sqlite", paras, args.queries, rng)
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
