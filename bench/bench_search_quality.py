"""Search quality on Wikispeedia: nDCG@10 of BM25 alone against BM25 combined with relevance.

Every Wikispeedia article (banner and license footer removed, as the test web serves them; its
first ``--max-chars`` characters, to keep the run short) is indexed once. For each topic (a category with at least 100 articles) the pages' relevance is set
to what a crawl for that topic would store: ``CosineModel`` (TF-IDF cosine, document frequencies
from the whole corpus) against the topic's keywords (the category path's words), or, with
``--seeds K``, the keywords plus K held-out example articles of the category. Queries per topic:

* the category name ("Birds", "Chemical elements") - gain 1 for every article of the category;
* ``--titles`` article titles of the category - gain 2 for the article itself, 1 for the other
  articles of its category.

nDCG@10 is averaged over the queries, for BM25 alone and for several relevance weights (and
link authority: PageRank over links.tsv), per relevance profile (``--seeds 0 5``: keywords
only, and keywords plus 5 held-out articles; the same held-out articles are left out of every
profile's queries and judgements). Needs the corpus (FOCUSCRAWL_CORPORA).

    .venv/bin/python bench/bench_search_quality.py [--titles 8] [--seeds 0 5] [--topics 8]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from focuscrawl.index import BM25_ONLY, PageIndex, RankWeights
from focuscrawl.index.backend import IndexStore
from focuscrawl.relevance.cosine import CosineModel, DocumentFrequencies
from focuscrawl.text import tokens

SETTINGS: list[tuple[str, RankWeights]] = [
    ("bm25", BM25_ONLY),
    ("bm25+rel 0.1", RankWeights(relevance=0.1)),
    ("bm25+rel 0.2", RankWeights(relevance=0.2)),
    ("bm25+rel 0.3", RankWeights(relevance=0.3)),
    ("bm25+rel 0.5", RankWeights(relevance=0.5)),
    ("bm25+rel 0.7", RankWeights(relevance=0.7)),
    ("bm25+auth 0.1", RankWeights(relevance=0.0, authority=0.1)),
    ("bm25+rel 0.3+auth 0.1", RankWeights(relevance=0.3, authority=0.1)),
]


def dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at(ranked: list[str], qrels: dict[str, float], k: int = 10) -> float:
    ideal = dcg(sorted(qrels.values(), reverse=True)[:k])
    return dcg([qrels.get(u, 0.0) for u in ranked[:k]]) / ideal if ideal else 0.0


def pagerank(
    links: dict[str, list[str]], names: list[str], d: float = 0.85, iters: int = 40
) -> dict[str, float]:
    n = len(names)
    pr = dict.fromkeys(names, 1.0 / n)
    for _ in range(iters):
        nxt = dict.fromkeys(names, (1 - d) / n)
        dangling = sum(pr[u] for u in names if not links.get(u))
        for u in names:
            outs = links.get(u) or ()
            for v in outs:
                nxt[v] += d * pr[u] / len(outs)
        share = d * dangling / n
        pr = {u: v + share for u, v in nxt.items()}
    top = max(pr.values())
    return {u: v / top for u, v in pr.items()}


def label(category: str) -> str:
    return category.rsplit(".", 1)[-1].replace("_", " ")


def main(
    argv: list[str] | None = None,
    make_index: Callable[[Path], IndexStore] | None = None,
    results: dict[tuple[int, str], float] | None = None,
) -> int:
    """``make_index(folder)``: the (empty) index to fill, SQLite in ``folder`` by default;
    ``results``: filled with the mean nDCG@10 of every (profile, ranking)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--titles", type=int, default=8, help="title queries per topic")
    ap.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0, 5],
        help="relevance profiles: held-out example articles in the profile (0: keywords only)",
    )
    ap.add_argument("--topics", type=int, default=8, help="largest categories used as topics")
    ap.add_argument(
        "--max-chars", type=int, default=6000, help="characters of each article indexed (0: all)"
    )
    args = ap.parse_args(argv)
    from focuseval.wikispeedia import WikispeediaCorpus, title_of

    t0 = time.perf_counter()
    try:
        corpus = WikispeediaCorpus.open()
    except FileNotFoundError as exc:
        print(f"needs the Wikispeedia corpus: {exc}")
        return 1
    names = corpus.titles
    url = {n: f"http://wikispeedia/{n}" for n in names}
    texts = {n: " ".join(corpus.paragraphs(n)) for n in names}
    if args.max_chars:
        texts = {n: t[: args.max_chars] for n, t in texts.items()}
    counts = {n: Counter(tokens(texts[n])) for n in names}
    dfs = DocumentFrequencies()
    for n in names:
        dfs.add(counts[n])
        for term in tokens(title_of(n)):
            counts[n][term] += 3  # as CosineModel.page_counts weighs titles
    with tempfile.TemporaryDirectory() as tmp:
        ix = make_index(Path(tmp)) if make_index else PageIndex.open(Path(tmp) / "wiki.sqlite")
        for n in names:
            ix.upsert(url[n], title_of(n), texts[n])
        ix.set_authority({url[n]: a for n, a in pagerank(corpus.links, names).items()})
        ix.commit()
        ix.optimize()
        print(f"{len(names)} articles indexed, {time.perf_counter() - t0:.0f} s")

        sizes = Counter(c for n in names for c in corpus.categories(n))
        cats = sorted(
            (c for c in sizes if c.count(".") >= 2), key=lambda c: (-len(corpus.members(c)), c)
        )
        cats = [c for c in cats if len(corpus.members(c)) >= 100][: args.topics]
        rng = random.Random(7)
        totals: dict[tuple[int, str], list[float]] = {}
        by_kind: dict[tuple[int, str, str], list[float]] = {}
        print(
            f"{'topic':<40} {'seeds':>5} {'queries':>7} "
            + " ".join(f"{n:>12}" for n, _ in SETTINGS[:4])
        )
        for cat in cats:
            members = sorted(corpus.members(cat))
            held_out = rng.sample(members, max(args.seeds))
            judged = [m for m in members if m not in held_out]
            queries: list[tuple[str, str, dict[str, float]]] = [
                ("category", label(cat), {url[m]: 1.0 for m in judged})
            ]
            for m in rng.sample(judged, min(args.titles, len(judged))):
                qrels = {url[o]: 1.0 for o in judged}
                qrels[url[m]] = 2.0
                queries.append(("title", title_of(m), qrels))
            keywords = [part.replace("_", " ") for part in cat.split(".")[1:]]
            for n_seeds in args.seeds:
                seeds = held_out[:n_seeds]
                model = CosineModel(
                    keywords=keywords, texts=[texts[s] for s in seeds], learn_idf=False
                )
                model.dfs = dfs
                ix.set_relevance({url[n]: model.score_counts(counts[n]) for n in names})
                ix.commit()
                row = []
                for name, weights in SETTINGS:
                    if n_seeds != args.seeds[0] and weights.relevance == 0:
                        scores = totals[(args.seeds[0], name)][
                            -len(queries) :
                        ]  # no relevance: same
                    else:
                        scores = []
                        for _kind, q, qrels in queries:
                            ranked = [h.url for h in ix.search(q, limit=10, weights=weights).hits]
                            scores.append(ndcg_at(ranked, qrels))
                    for (kind, _, _), sc in zip(queries, scores, strict=True):
                        by_kind.setdefault((n_seeds, name, kind), []).append(sc)
                    totals.setdefault((n_seeds, name), []).extend(scores)
                    row.append(sum(scores) / len(scores))
                print(
                    f"{cat:<40} {n_seeds:>5} {len(queries):>7} "
                    + " ".join(f"{v:>12.3f}" for v in row[:4])
                )
        ix.close()
    for n_seeds in args.seeds:
        base_scores = totals[(n_seeds, "bm25")]
        base = sum(base_scores) / len(base_scores)
        print(
            f"\nnDCG@10 over {len(base_scores)} queries, {len(cats)} topics, relevance profile: keywords"
            + (f" + {n_seeds} held-out example articles" if n_seeds else " only")
        )
        print(f"{'ranking':<24} {'all':>7} {'category q':>11} {'title q':>8} {'vs bm25':>8}")
        for name, _ in SETTINGS:
            sc = totals[(n_seeds, name)]
            mean = sum(sc) / len(sc)
            if results is not None:
                results[(n_seeds, name)] = mean
            cat_q = by_kind[(n_seeds, name, "category")]
            tit_q = by_kind[(n_seeds, name, "title")]
            print(
                f"{name:<24} {mean:>7.3f} {sum(cat_q) / len(cat_q):>11.3f} {sum(tit_q) / len(tit_q):>8.3f}"
                f" {mean / base:>7.2f}x"
            )
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
