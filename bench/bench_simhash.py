"""Simhash benchmark: focuscrawl's NumPy simhash against the ``simhash`` package, side by side.

1. Speed on ~800-word pages (real article bodies of 700-900 words from the article-extraction
   benchmark in FOCUSCRAWL_CORPORA, else synthetic text): best-of-N time per page of
   ``simhash.Simhash(text).value`` (char 4-grams, md5 per feature) and of
   ``focuscrawl.change.simhash.simhash_text(text)`` (terms with ids/times masked, one vectorised
   hash pass), interleaved in the same run, and the ratio. Target: >= 20x.
2. Robustness: a long page with a repeated shingle (the package's uint8 overflow under NumPy 2).
3. Effect of the different fingerprints on detection: one sentence changed in each page, the
   share of changes each fingerprint sees (Hamming distance > 0 and > 3 bits); the real-data
   precision/recall of both is in bench/bench_recrawl.py (APFC).

    .venv/bin/python bench/bench_simhash.py [--pages 12] [--repeat 30]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from focuseval.corpora import corpora_dir
from simhash import Simhash

from focuscrawl.change.simhash import hamming, simhash_text


def pages(n: int) -> tuple[list[str], str]:
    root = corpora_dir()
    gt = root / "article-extraction-benchmark" / "ground-truth.json" if root else None
    if gt is not None and gt.is_file():
        data = json.loads(gt.read_text(encoding="utf-8"))
        bodies = sorted(
            (v["articleBody"] for v in data.values() if isinstance(v, dict) and "articleBody" in v),
            key=lambda b: abs(len(b.split()) - 800),
        )
        return bodies[:n], "article-extraction-benchmark (700-900 words)"
    rng = random.Random(1)
    vocab = [f"w{i}" for i in range(3000)]
    return [" ".join(rng.choices(vocab, k=800)) for _ in range(n)], "synthetic 800 words"


def best_time(fn, arg: str, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t)
    return best


def package(text: str) -> int:
    return Simhash(text).value


def change_one_sentence(text: str, rng: random.Random) -> str:
    sentences = text.split(". ")
    i = rng.randrange(len(sentences))
    words = sentences[i].split()
    if words:
        words[rng.randrange(len(words))] = "considerably"
    sentences[i] = " ".join(words)
    return ". ".join(sentences)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    texts, source = pages(args.pages)
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"pages: {len(texts)} from {source}, {words:.0f} words on average")
    ours_t, pkg_t = [], []
    for text in texts:  # interleaved: both see the same machine load
        pkg_t.append(best_time(package, text, args.repeat))
        ours_t.append(best_time(simhash_text, text, args.repeat))
    pkg_ms = 1000 * sum(pkg_t) / len(pkg_t)
    ours_ms = 1000 * sum(ours_t) / len(ours_t)
    print("| implementation | ms per page | ratio |")
    print("| --- | --- | --- |")
    print(f"| simhash package 2.1.2 (baseline) | {pkg_ms:.3f} | 1.0x |")
    print(f"| focuscrawl simhash_text | {ours_ms:.3f} | {pkg_ms / ours_ms:.1f}x faster |")
    print(f"speedup: {pkg_ms / ours_ms:.1f}x (target >= 20x)")

    long_page = " ".join(["the same sentence over and over"] * 2000)
    try:
        package(long_page)
        pkg_long = "ok"
    except OverflowError as exc:
        pkg_long = f"OverflowError ({exc})"
    print(
        f"long repeated page: package -> {pkg_long}; focuscrawl -> {simhash_text(long_page):016x}"
    )

    rng = random.Random(7)
    seen = {"focuscrawl >0": 0, "focuscrawl >3": 0, "package >0": 0, "package >3": 0}
    trials = 0
    for text in texts:
        for _ in range(10):
            changed = change_one_sentence(text, rng)
            if changed == text:
                continue
            trials += 1
            d_ours = hamming(simhash_text(text), simhash_text(changed))
            d_pkg = hamming(package(text), package(changed))
            seen["focuscrawl >0"] += d_ours > 0
            seen["focuscrawl >3"] += d_ours > 3
            seen["package >0"] += d_pkg > 0
            seen["package >3"] += d_pkg > 3
    print(f"one-word change in one sentence, {trials} trials: share detected by Hamming distance")
    print("| fingerprint | > 0 bits | > 3 bits |")
    print("| --- | --- | --- |")
    for name in ("focuscrawl", "package"):
        a, b = seen[f"{name} >0"] / trials, seen[f"{name} >3"] / trials
        print(f"| {name} | {a:.2f} | {b:.2f} |")


if __name__ == "__main__":
    main()
