"""Milliseconds per compare on ~200 KB pages (``focuscrawl eval-recrawl --only speed``).

Two costs, medians over real pages:

* **on a parsed page**: what change detection adds to a crawl, where the partition is done
  anyway, as the crawl does it: the new version's fingerprints (content, no document index) and
  their record (the middleware), both records read back, :func:`~focuscrawl.change.classify.classify`
  and the new record written for the store (the pipeline);
* **in full**: :func:`~focuscrawl.change.compare` on two bodies (two partitions included).

Pages: APFC versions (~207 KB, mostly scripts and markup; consecutive pairs, which differ by
noise or by a real change) and the article-extraction benchmark's pages of 150–260 KB (text-heavy
news pages), each against itself with a sentence inserted in the middle, and with noise injected.
"""

from __future__ import annotations

import gzip
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from focuscrawl.blocks.partition import partition
from focuscrawl.change import compare
from focuscrawl.change.classify import classify
from focuscrawl.change.fingerprint import Fingerprints, fingerprint
from focuseval.change_versions import inject_noise
from focuseval.recrawl import APFC_URL, apfc_versions

ARTICLES = "article-extraction-benchmark/html"
SIZE_RANGE = (150_000, 260_000)


def _best_ms(fn: Callable[[], object], repeat: int = 15) -> float:
    """The least CPU time of ``repeat`` runs: on a shared machine, wall time and the worse runs
    measure the neighbours."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times) * 1000


def _on_parsed_page(
    old: bytes, new: bytes, url: str, content: bool = True, terms: bool = False
) -> float:
    """``content=False``: issue 6's record; ``terms=True``: the content and the document index
    (the record before issue 16 dropped the index from a crawl's records)."""
    old_record = fingerprint(partition(old, url), old, content=content, terms=terms).to_dict()
    page = partition(new, url)

    def work() -> None:
        record = fingerprint(page, new, content=content, terms=terms).to_dict()
        fp = Fingerprints.from_dict(record)
        classify(Fingerprints.from_dict(old_record), fp, url)
        fp.to_dict()

    return _best_ms(work)


def _insert_sentence(body: bytes) -> bytes:
    at = body.find(b"</p>", len(body) // 2)
    if at < 0:
        return body + b"<p>A sentence was added.</p>"
    return body[:at] + b" A sentence was added here, with 12 new words in it." + body[at:]


def pairs(corpora: Path, n: int = 8) -> dict[str, list[tuple[bytes, bytes, str]]]:
    """Pairs of versions by kind: APFC consecutive, article + sentence, article + noise."""
    apfc = [v.body for v in apfc_versions(corpora, limit=n + 1)]
    out: dict[str, list[tuple[bytes, bytes, str]]] = {
        "APFC consecutive versions": [
            (a, b, APFC_URL) for a, b in zip(apfc, apfc[1:], strict=False)
        ]
    }
    articles = []
    for path in sorted((Path(corpora) / ARTICLES).glob("*.html.gz")):
        body = gzip.decompress(path.read_bytes())
        if SIZE_RANGE[0] <= len(body) <= SIZE_RANGE[1]:
            articles.append((body, f"https://news.example/{path.name[:12]}"))
        if len(articles) >= n:
            break
    out["article + a sentence"] = [(b, _insert_sentence(b), u) for b, u in articles]
    out["article + injected noise"] = [
        (b, inject_noise(b, i).encode(), u) for i, (b, u) in enumerate(articles)
    ]
    return out


def speed_table(corpora: Path) -> str:
    rows = [
        "\n### ms per compare (CPU time: median over pages of the best of 15 runs)\n",
        "| pages | n | KB | on a parsed page | … with the document index too | … issue 6's "
        "record (no content) | partition of one version | in full: compare() | statuses |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind, group in pairs(corpora).items():
        if not group:
            continue
        parsed = [_on_parsed_page(a, b, u) for a, b, u in group]
        indexed = [_on_parsed_page(a, b, u, terms=True) for a, b, u in group]
        before = [_on_parsed_page(a, b, u, content=False) for a, b, u in group]
        parse = [_best_ms(lambda b=b, u=u: partition(b, u), 3) for _, b, u in group]
        full = [_best_ms(lambda a=a, b=b, u=u: compare(a, b, u), 3) for a, b, u in group]
        statuses = sorted({compare(a, b, u).status for a, b, u in group})
        kb = statistics.median(len(b) for _, b, _ in group) / 1024
        cells = [statistics.median(x) for x in (parsed, indexed, before, parse, full)]
        rows.append(
            f"| {kind} | {len(group)} | {kb:.0f} | "
            + " | ".join(f"{c:.2f} ms" for c in cells)
            + f" | {', '.join(statuses)} |"
        )
    return "\n".join(rows)
