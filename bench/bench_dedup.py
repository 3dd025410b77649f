"""Near-duplicates: what the index saves a crawl, what it costs, and which fingerprint fits.

``crawl``: ``scrapy crawl topical`` (bfs) of the mirrored test web (20 % of the pages are
copies) with ``FOCUSCRAWL_DEDUP`` off (the baseline) and on, alternating rounds in the same
run: duplicates fetched, duplicates expanded (their links followed), pages fetched through a
copy's links, copies marked, false marks, pages/s; the ratios on/off.

``index``: the index alone: bytes per page (tracemalloc) and microseconds per add and per
lookup at 200,000 pages; fingerprinting time per page against the exact digest alone.

``features``: which fingerprint separates copies from different pages on the mirrored web:
simhash over single words, word pairs (what focuscrawl uses) and word triples, and a 128-hash
MinHash (Jaccard of word-pair sets, ACHE's choice) as the baseline: the largest distance of a
copy to its original, the smallest between two different articles, bytes and time per page.

``real``: false marks on real, distinct texts: the 4,604 Wikispeedia articles
(``FOCUSCRAWL_CORPORA``) looked up one after the other.

    .venv/bin/python bench/bench_dedup.py [--parts crawl,index,features,real] [--rounds 1]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
from focuseval.dedup_metrics import dedup_metrics
from focuseval.mirrored import MirroredWeb
from focuseval.site import loopback_hosts
from focuseval.testweb import TestWebProcess

from focuscrawl.change.simhash import hamming, simhash64
from focuscrawl.dedup import NearDuplicateIndex, TextPrint, text_print
from focuscrawl.dedup.fingerprint import pair_simhash, shingles, words_of


# -- crawl ----------------------------------------------------------------------------------
def crawl_once(web: TestWebProcess, dedup: bool, tmp: Path) -> dict[str, Any]:
    out = tmp / ("on" if dedup else "off")
    out.mkdir()
    topic = out / "t.toml"
    seeds = json.dumps(web.seeds["birds"])
    topic.write_text(f'name = "birds"\nkeywords = ["birds", "nest"]\nseeds = {seeds}\n')
    args = {
        "FOCUSCRAWL_ALLOW_PRIVATE": web.allow_private,
        "FOCUSCRAWL_DEDUP": dedup,
        "FOCUSCRAWL_STRATEGY": "bfs",
        "FOCUSCRAWL_CRAWL_LOG": out / "log.jsonl",
        "FOCUSCRAWL_STATS_FILE": out / "stats.json",
        "FOCUSCRAWL_DATA_DIR": out / "data",
        "FOCUSCRAWL_INDEX_ENABLED": False,
        "LOG_LEVEL": "WARNING",
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", "-a", f"topic={topic}"]
    for name, value in args.items():
        cmd += ["-s", f"{name}={value}"]
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "focuscrawl.settings"}
    subprocess.run(cmd, cwd=out, env=env, check=True, capture_output=True)
    log = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    stats = json.loads((out / "stats.json").read_text())
    site = MirroredWeb(web.hosts, web.port)
    m = dedup_metrics(log, site.groups()).as_dict()
    m["pages_per_s"] = round(len(log) / float(stats["elapsed_time_seconds"]), 1)
    m["links_not_followed"] = stats.get("focuscrawl/dedup/links_not_followed", 0)
    m["relevant"] = stats.get("focuscrawl/harvest/relevant", 0)
    judged = stats.get("focuscrawl/harvest/pages", 0)
    m["harvest_rate"] = round(m["relevant"] / judged, 4) if judged else 0.0
    return m


def bench_crawl(rounds: int) -> None:
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    with TestWebProcess("mirrored") as web, tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            for dedup in (False, True):
                tmp = Path(d) / f"r{r}"
                tmp.mkdir(exist_ok=True)
                runs[dedup].append(crawl_once(web, dedup, tmp))
    keys = ["fetched", "duplicates", "expanded", "via_duplicates", "marked", "false_marks"]
    keys += ["marked_share", "false_share", "links_not_followed", "relevant", "harvest_rate"]
    keys += ["pages_per_s"]
    print(f"crawl: mirrored web, bfs to the end, {rounds} round(s); median of rounds")
    print(f"  {'':20} {'dedup off':>10} {'dedup on':>10} {'on/off':>8}")
    for key in keys:
        off = statistics.median(r[key] for r in runs[False])
        on = statistics.median(r[key] for r in runs[True])
        ratio = f"{on / off:8.2f}" if off else f"{'':>8}"
        print(f"  {key:20} {off:>10.4g} {on:>10.4g} {ratio}")


# -- index ----------------------------------------------------------------------------------
def bench_index(n: int = 200_000, bits: int = 4) -> None:
    rng = random.Random(1)
    prints = [TextPrint(rng.getrandbits(64), rng.getrandbits(64), 100) for _ in range(n)]
    urls = [f"http://host{i % 997}.example.org/articles/{i}-some-title.html" for i in range(n)]
    tracemalloc.start()
    index = NearDuplicateIndex(bits, max_pages=0)
    for url, fp in zip(urls, prints, strict=True):
        index.add(url, fp)
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    index = NearDuplicateIndex(bits, max_pages=0)  # again, timed without tracemalloc
    t = time.perf_counter()
    for url, fp in zip(urls, prints, strict=True):
        index.add(url, fp)
    add = (time.perf_counter() - t) / n
    probes = [TextPrint(fp.simhash ^ (1 << 7), 0, 100) for fp in prints[:20_000]]
    t = time.perf_counter()
    found = sum(index.find(p) is not None for p in probes)
    find = (time.perf_counter() - t) / len(probes)
    print(f"index: {n} pages, {bits} bits ({bits + 1} bands)")
    print(f"  memory {size / n:.1f} bytes/page (arrays {index.bytes_per_page():.1f} + buckets)")
    print(f"  add {add * 1e6:.1f} us/page, lookup {find * 1e6:.1f} us/page, {found} found")
    site = MirroredWeb(loopback_hosts(4), 8000)
    texts = [" ".join(a.paragraphs) for a in site.articles]
    t = time.perf_counter()
    for text in texts:
        hashlib.blake2b(" ".join(text.split()).casefold().encode(), digest_size=8).digest()
    base = (time.perf_counter() - t) / len(texts)
    t = time.perf_counter()
    for text in texts:
        text_print(text)
    ours = (time.perf_counter() - t) / len(texts)
    words = statistics.mean(len(x.split()) for x in texts)
    print(f"  fingerprint of a {words:.0f}-word text: exact digest only {base * 1e6:.0f} us, ")
    print(f"  simhash of word pairs + digest {ours * 1e6:.0f} us (ratio {ours / base:.1f})")


# -- features -------------------------------------------------------------------------------
def _minhash(words: list[str], seeds: np.ndarray) -> np.ndarray:
    feats = list(shingles(words, 2)) or [""]
    h = np.array([int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                  for f in feats], dtype=np.uint64)  # fmt: skip
    return ((h[None, :] * seeds[:, None]) >> np.uint64(32)).min(axis=1)


def bench_features() -> None:
    from focuscrawl.blocks import partition

    site = MirroredWeb(loopback_hosts(4), 8000)

    def main_text(url: str) -> str:
        hostport, _, path = url.split("://", 1)[1].partition("/")
        res = site.get(hostport.split(":")[0], "/" + path)
        assert res is not None
        return partition(res.body.decode(), url).main_text

    originals = [main_text(site.url(a)) for a in site.articles]
    copies = [(c, main_text(c.url)) for c in site.copies if c.kind != "utm"]
    print("features: mirrored web, 400 articles, 80 copies (bits: simhash; J: MinHash Jaccard)")
    print(
        f"  {'fingerprint':26} {'worst copy':>10} {'closest other':>13} {'bytes':>6} {'us/page':>8}"
    )
    for size in (1, 2, 3):
        t = time.perf_counter()
        sims = [simhash64(shingles(words_of(x), size)) for x in originals]
        per = (time.perf_counter() - t) / len(originals)
        worst = max(hamming(sims[c.of], simhash64(shingles(words_of(x), size))) for c, x in copies)
        closest = min(hamming(a, b) for a, b in itertools.combinations(sims, 2))
        name = ("single words", "word pairs", "word triples")[size - 1]
        print(f"  simhash, {name:17} {worst:>10} {closest:>13} {8:>6} {per * 1e6:>8.0f}")
    t = time.perf_counter()
    ours = [pair_simhash(words_of(x)) for x in originals]
    per = (time.perf_counter() - t) / len(originals)
    worst = max(hamming(ours[c.of], pair_simhash(words_of(x))) for c, x in copies)
    closest = min(hamming(a, b) for a, b in itertools.combinations(ours, 2))
    print(f"  {'simhash, pairs (ours)':26} {worst:>10} {closest:>13} {8:>6} {per * 1e6:>8.0f}")
    seeds = np.array([random.Random(s).getrandbits(64) | 1 for s in range(128)], dtype=np.uint64)
    t = time.perf_counter()
    mins = [_minhash(words_of(x), seeds) for x in originals]
    per = (time.perf_counter() - t) / len(originals)
    worst_j = min(float(np.mean(mins[c.of] == _minhash(words_of(x), seeds))) for c, x in copies)
    stack = np.stack(mins)
    best_other = 0.0
    for i in range(len(stack)):
        eq = (stack[i + 1 :] == stack[i]).mean(axis=1)
        best_other = max(best_other, float(eq.max()) if eq.size else 0.0)
    print(
        f"  {'MinHash 128, word pairs':26} {'J ' + f'{worst_j:.2f}':>10} "
        f"{'J ' + f'{best_other:.2f}':>13} {128 * 4:>6} {per * 1e6:>8.0f}"
    )


# -- real -----------------------------------------------------------------------------------
def bench_real() -> None:
    from focuseval.corpora import corpora_dir
    from focuseval.wikispeedia import WikispeediaCorpus

    try:
        corpus = WikispeediaCorpus.open(corpora_dir())
    except (FileNotFoundError, OSError) as exc:
        print(f"real: skipped, no corpus ({exc}); set FOCUSCRAWL_CORPORA")
        return
    prints = {name: text_print(corpus.texts[name]) for name in sorted(corpus.texts)}
    for bits in (3, 4, 5, 6, 8):
        index = NearDuplicateIndex(bits)
        marked: list[tuple[str, str]] = []
        for name, fp in prints.items():
            match = index.find(fp)
            if match is not None:
                marked.append((name, match.url))
            else:
                index.add(name, fp)
        # a mark is false when the two texts share less than half of their word pairs
        false = [(a, b) for a, b in marked if _jaccard(corpus.texts[a], corpus.texts[b]) < 0.5]
        print(
            f"real: Wikispeedia, {len(prints)} articles, {bits} bits: {len(marked)} marked, "
            f"{len(false)} of them false (word-pair Jaccard < 0.5) {false[:3]}"
        )
    print(f"  e.g. marked: {marked[:4]}")


def _jaccard(a: str, b: str) -> float:
    x, y = set(shingles(words_of(a))), set(shingles(words_of(b)))
    return len(x & y) / len(x | y) if x | y else 1.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="crawl,index,features,real")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    parts = args.parts.split(",")
    if "crawl" in parts:
        bench_crawl(args.rounds)
    if "index" in parts:
        bench_index()
    if "features" in parts:
        bench_features()
    if "real" in parts:
        bench_real()


if __name__ == "__main__":
    main()
