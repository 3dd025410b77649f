"""Recrawl experiments: change detection on real page versions (the APFC corpus).

``score_versions`` replays consecutive versions of one page and scores the ``significant``
decision of each technique against the labels; see docs/change.md for the figures.
``run_six_cycles`` replays the six-cycle experiment on the evolving web; the freshness
simulation lives in :mod:`focuseval.freshness` (re-exported here).
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from focuscrawl.blocks.partition import partition
from focuscrawl.change.classify import TECHNIQUES, Thresholds
from focuscrawl.change.fingerprint import DEFAULT_THRESHOLDS, Fingerprints, fingerprint, text_of
from focuseval.evolving import SIX_CYCLES, EvolvingWeb
from focuseval.freshness import (  # noqa: F401 (re-exported for the experiments)
    FEED_HEAVY_CLASSES,
    FRESHNESS_CLASSES,
    SCENARIOS,
    PageClass,
    optimal_freshness,
    simulate_freshness,
)
from focuseval.site import Resource, Site

APFC = "change-detection/apfc-performance.tar.xz"
APFC_URL = "https://apfc.org/performance/"


@dataclass(slots=True)
class Version:
    name: str  # the fetch time, from the file name
    body: bytes
    label: dict | None  # the extracted record; None when the corpus has none


def apfc_versions(corpora: Path, limit: int | None = None) -> Iterator[Version]:
    """The page versions in fetch order, read from the tarball in place (no extraction)."""
    path = Path(corpora) / APFC
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (set FOCUSCRAWL_CORPORA)")
    with tarfile.open(path, "r:xz") as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        htmls = sorted(n for n in members if n.endswith(".html") and "/htmls/" in n)
        for name in htmls[:limit]:
            json_name = name.replace("/htmls/", "/jsons/").removesuffix(".html") + ".json"
            label = None
            if json_name in members:
                fh = tar.extractfile(members[json_name])
                label = json.loads(fh.read()) if fh else None
            fh = tar.extractfile(members[name])
            yield Version(Path(name).stem, fh.read() if fh else b"", label)


@dataclass(slots=True)
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    false_positives: list[str] = field(default_factory=list)
    false_negatives: list[str] = field(default_factory=list)

    def add(self, predicted: bool, actual: bool, name: str) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
            self.false_positives.append(name)
        elif actual:
            self.fn += 1
            self.false_negatives.append(name)
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def package_simhash(fp_texts: list[str]) -> int:
    """The ``simhash`` package's fingerprint of the same content text (its default features)."""
    from simhash import Simhash

    return Simhash(" ".join(fp_texts)).value


def score_versions(
    versions: Iterator[Version],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    techniques: tuple[str, ...] = ("hash", "size", "doc-index", "simhash"),
    package_bits: tuple[int, ...] = (0, 3),
) -> dict[str, Score]:
    """Precision/recall of "changed significantly" per technique on consecutive versions.

    A pair without a label on either side is skipped. ``simhash-pkg>k`` rows score the
    ``simhash`` package on the same content text (changed when more than k bits differ).
    """
    scores: dict[str, Score] = {t: Score() for t in techniques}
    for k in package_bits:
        scores[f"simhash-pkg>{k}"] = Score()
    prev: tuple[Version, Fingerprints, int] | None = None
    for version in versions:
        page = partition(version.body, APFC_URL)
        fp = fingerprint(page, version.body, thresholds=thresholds, terms=True)
        try:
            pkg = package_simhash(text_of(page, thresholds.min_block_weight))
        except OverflowError:  # the package's uint8 bug under NumPy 2 (DESIGN.md)
            pkg = -1
        if prev is not None and prev[0].label is not None and version.label is not None:
            actual = prev[0].label != version.label
            for t in techniques:
                scores[t].add(TECHNIQUES[t](prev[1], fp, thresholds), actual, version.name)
            for k in package_bits:
                changed = pkg < 0 or prev[2] < 0 or bin(pkg ^ prev[2]).count("1") > k
                scores[f"simhash-pkg>{k}"].add(changed, actual, version.name)
        prev = (version, fp, pkg)
    return scores


# --- the six-cycle experiment -------------------------------------------------------------------
SIX_TECHNIQUES = (
    "refetch-all",
    "last-modified",
    "size",
    "hash",
    "doc-index",
    "simhash",
    "content-diff",
)


@dataclass(slots=True)
class CycleRow:
    cycle: str
    body_bytes: int = 0  # bodies downloaded (200 responses)
    fetched: int = 0  # 200 responses
    not_modified: int = 0  # 304 responses: no body
    gone: int = 0  # 404 responses
    indexed: int = 0  # items sent to the index: new, changed (per the technique), tombstones
    victims_indexed: int = 0  # … of which pages the cycle's mutation touched


def exchange(
    site: Site, host: str, path: str, if_none_match: str = "", if_modified_since: float = -1.0
) -> tuple[int, Resource | None]:
    """One simulated HTTP GET with the test server's conditional-GET rules."""
    res = site.get(host, path)
    if res is None:
        return 404, None
    if res.status == 200:
        if if_none_match and if_none_match == res.etag:
            return 304, res
        if (
            not if_none_match
            and if_modified_since >= 0
            and int(res.last_modified) <= int(if_modified_since)
        ):
            return 304, res
    return res.status, res


def run_six_cycles(
    web: EvolvingWeb, technique: str, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> list[CycleRow]:
    """Replay the six cycles on ``web`` (reset first) for one technique.

    The crawler is simulated over the Site objects (no sockets): it revisits every known page
    each cycle; ``refetch-all`` sends plain GETs, ``last-modified`` conditional GETs with
    If-Modified-Since, the content techniques with If-None-Match (and an unchanged body costs a
    304 for all of them). The technique decides which fetched pages go to the index.
    """
    if technique not in TECHNIQUES:
        raise ValueError(f"unknown technique {technique!r}")
    web.state.clear()
    victims = {f"http://{h}{p}" for h, p in web.victims}
    store: dict[str, Fingerprints] = {}
    lm_time: dict[str, float] = {}
    deleted: set[str] = set()
    rows: list[CycleRow] = []
    for cycle in range(len(SIX_CYCLES)):
        row = CycleRow(web.step(cycle))
        for host, path in web.pages:
            url = f"http://{host}{path}"
            known = store.get(url)
            cond = technique != "refetch-all" and known is not None and url not in deleted
            inm = known.etag if cond and known and technique != "last-modified" else ""
            ims = lm_time.get(url, -1.0) if cond else -1.0
            status, res = exchange(web, host, path, inm, ims)
            if status == 404:
                row.gone += 1
                if known is not None and url not in deleted:
                    deleted.add(url)
                    row.indexed += 1  # the tombstone
                    row.victims_indexed += url in victims
                continue
            if status == 304 or res is None:
                row.not_modified += 1
                continue
            row.fetched += 1
            row.body_bytes += len(res.body)
            fp = _fingerprint_cached(res, thresholds)
            if known is None or url in deleted:
                send = True
            else:
                send = TECHNIQUES[technique](known, fp, thresholds)
            deleted.discard(url)
            if send:
                row.indexed += 1
                row.victims_indexed += url in victims
            store[url] = fp
            lm_time[url] = res.last_modified
        rows.append(row)
    return rows


_FP_CACHE: dict[tuple[str, Thresholds], Fingerprints] = {}


def _fingerprint_cached(res: Resource, thresholds: Thresholds) -> Fingerprints:
    key = (res.etag, thresholds)
    fp = _FP_CACHE.get(key)
    if fp is None:
        headers = {"ETag": res.etag, "Last-Modified": res.last_modified_http}
        fp = fingerprint(
            partition(res.body, "http://evolving/"),
            res.body,
            headers,
            thresholds=thresholds,
            terms=True,
        )
        if len(_FP_CACHE) > 50_000:
            _FP_CACHE.clear()
        _FP_CACHE[key] = fp
    return fp


def six_cycle_table(rows_by_technique: dict[str, list[CycleRow]]) -> str:
    """Markdown: per technique and cycle, ``body KB / pages fetched / items to the index``."""
    cycles = [r.cycle for r in next(iter(rows_by_technique.values()))]
    out = ["| technique | " + " | ".join(cycles) + " |", "|---" * (len(cycles) + 1) + "|"]
    for tech, rows in rows_by_technique.items():
        cells = [f"{r.body_bytes / 1024:.0f} KB / {r.fetched} / {r.indexed}" for r in rows]
        out.append(f"| {tech} | " + " | ".join(cells) + " |")
    return "\n".join(out)
