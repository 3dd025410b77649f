"""Extraction quality on the shared corpora: token-level F1 of main text against gold text.

The metric of the article-extraction benchmark: bags of lower-cased ``\\w+`` tokens, multiset
intersection, F1 per page, macro-averaged; an error or an empty output scores 0.
Corpora are read by path (``focuseval.corpora.corpora_dir()``), never copied.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import tarfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

_TOKEN = re.compile(r"\w+")
READABILITY_MIN_SOURCE_BYTES = 4096
AEB = "article-extraction-benchmark"
RTP = "readability-test-pages"
WCXB = "wcxb-dev"
# Older WCXB files say "category" for what the newer ones call "collection".
WCXB_KIND_ALIASES = {"category": "collection"}


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    html: bytes
    gold: str
    url: str
    kind: str = ""  # the gold page type, where the corpus has one (wcxb-dev)


def token_f1(predicted: str, gold: str) -> float:
    pred = Counter(_TOKEN.findall(predicted.lower()))
    ref = Counter(_TOKEN.findall(gold.lower()))
    common = sum((pred & ref).values())
    if not common:
        return 0.0
    precision = common / sum(pred.values())
    recall = common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def wcxb_f1(predicted: str, gold: str) -> float:
    """The WCXB benchmark's own metric for one page.

    F1 over the multisets of ``re.findall(r"\\w+", text.lower())`` words; an empty output
    scores 0, except on a page whose gold is empty too, which scores 1 (and any non-empty
    output on an empty-gold page scores 0). Differs from ``token_f1`` only on empty gold.
    """
    if not _TOKEN.search(gold):
        return 0.0 if _TOKEN.search(predicted) else 1.0
    return token_f1(predicted, gold)


def article_benchmark(root: Path) -> Iterator[Case]:
    """The 181 pages of the article-extraction benchmark with their gold ``articleBody``."""
    folder = root / AEB
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    for key in sorted(truth):
        html = gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes())
        yield Case(key, html, truth[key]["articleBody"], truth[key].get("url", ""))


def readability_pages(root: Path) -> Iterator[Case]:
    """Real-site cases of Mozilla's readability test pages (source.html of 4 KB or more)."""
    files: dict[str, dict[str, bytes]] = {}
    with tarfile.open(root / RTP / "test-pages.tar.gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if (
                member.isfile()
                and len(parts) >= 3
                and parts[-1] in ("source.html", "expected.html")
            ):
                f = tar.extractfile(member)
                if f is not None:
                    files.setdefault(parts[-2], {})[parts[-1]] = f.read()
    for name in sorted(files):
        pair = files[name]
        source, expected = pair.get("source.html"), pair.get("expected.html")
        if source is None or expected is None or len(source) < READABILITY_MIN_SOURCE_BYTES:
            continue
        yield Case(name, source, _text_of(expected), f"http://fakehost/test/{name}/")


def _text_of(html: bytes) -> str:
    root = etree.fromstring(html, etree.HTMLParser(encoding="utf-8"))
    return " ".join(root.itertext()) if root is not None else ""


def wcxb_dev(root: Path) -> Iterator[Case]:
    """The 1,497 pages of WCXB's dev split with their gold ``main_content`` and page type."""
    html: dict[str, bytes] = {}
    truth: dict[str, dict] = {}
    with tarfile.open(root / WCXB / "wcxb-dev.tar.xz", "r:xz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            folder, _, name = member.name.rpartition("/")
            stem = name.rsplit(".", 1)[0]
            f = tar.extractfile(member)
            if f is None:
                continue
            if folder.endswith("/html") and name.endswith(".html"):
                html[stem] = f.read()
            elif folder.endswith("/ground-truth") and name.endswith(".json"):
                truth[stem] = json.loads(f.read())
    for stem in sorted(truth.keys() & html.keys()):
        t = truth[stem]
        kind = (t.get("_internal", {}).get("page_type", {}).get("primary") or "").lower()
        gold = t.get("ground_truth", {}).get("main_content") or ""
        url = t.get("url", "")
        yield Case(stem, html[stem], gold, url, WCXB_KIND_ALIASES.get(kind, kind))


def domain_of(url: str) -> str:
    """The host of ``url`` without ``www.``: the unit of the cross-validation folds."""
    host = urlsplit(url).hostname or ""
    return host[4:] if host.startswith("www.") else host


def domain_fold(url: str, folds: int) -> int:
    """A stable fold number in ``range(folds)`` for the domain of ``url``."""
    return int(hashlib.sha256(domain_of(url).encode()).hexdigest(), 16) % folds


CORPORA: dict[str, Callable[[Path], Iterator[Case]]] = {
    AEB: article_benchmark,
    RTP: readability_pages,
    WCXB: wcxb_dev,
}


def corpus_digest(root: Path, name: str) -> str:
    """SHA-256 over the corpus files, so a changed corpus is told from a changed extractor."""
    h = hashlib.sha256()
    folder = root / name
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "SOURCE.md"):
        h.update(str(path.relative_to(folder)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def macro_f1(cases: list[Case], extract: Callable[[Case], str]) -> tuple[float, list[float]]:
    """Macro-averaged token F1 of ``extract`` over ``cases``; an exception scores 0."""
    scores = []
    for case in cases:
        try:
            scores.append(token_f1(extract(case) or "", case.gold))
        except Exception:  # noqa: BLE001 - a failing extractor scores 0, as the metric says
            scores.append(0.0)
    return (sum(scores) / len(scores) if scores else 0.0), scores
