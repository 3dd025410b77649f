"""Recrawl experiments: change detection on real page versions (the APFC corpus).

``score_versions`` replays consecutive versions of one page and scores the ``significant``
decision of each technique against the labels; see docs/change.md for the figures.
The six-cycle experiment and the freshness simulation live in
:mod:`focuscrawl.evaluation.recrawl_cycles` and :mod:`focuscrawl.change.freshness`.
"""

from __future__ import annotations

import bisect
import json
import math
import random
import tarfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from focuscrawl.blocks.partition import partition
from focuscrawl.change.classify import TECHNIQUES, Thresholds
from focuscrawl.change.fingerprint import DEFAULT_THRESHOLDS, Fingerprints, fingerprint, text_of
from focuscrawl.change.policy import due, plan_clusters
from focuscrawl.change.store import PageRecord
from focuscrawl.evaluation.evolving import SIX_CYCLES, EvolvingWeb
from focuscrawl.evaluation.site import Resource, Site

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

    def add(self, predicted: bool, actual: bool, name: str) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
            self.false_positives.append(name)
        elif actual:
            self.fn += 1
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
        fp = fingerprint(page, version.body, thresholds=thresholds)
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


# --- freshness at equal budget -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PageClass:
    """Pages of one section of the evolving web, changing as a Poisson process."""

    section: str  # URL section, e.g. "news": the URL pattern correlates with change
    share: float  # fraction of the pages
    rate: float  # changes per cycle
    size: int = 20_000  # body bytes (a cluster feature)


#: A web where most budget is wasted by uniform revisiting: a few fast sections, more slow ones.
FRESHNESS_CLASSES = (
    PageClass("live", 0.10, 3.0, 8_000),
    PageClass("news", 0.15, 0.5, 15_000),
    PageClass("blog", 0.20, 0.12, 25_000),
    PageClass("docs", 0.25, 0.02, 40_000),
    PageClass("archive", 0.30, 0.002, 60_000),
)


#: 70% of the pages change several times per cycle (feeds, tickers, front pages): the budget
#: uniform revisiting spends on them is wasted, and the gap a rate-aware policy can close grows.
FEED_HEAVY_CLASSES = (
    PageClass("feed", 0.70, 4.0, 6_000),
    PageClass("blog", 0.30, 0.15, 25_000),
)

SCENARIOS = {"mixed web": FRESHNESS_CLASSES, "feed-heavy web": FEED_HEAVY_CLASSES}


def _pages(classes: Sequence[PageClass], n_pages: int) -> list[tuple[str, PageClass]]:
    pages: list[tuple[str, PageClass]] = []
    for c in classes:
        for k in range(round(c.share * n_pages)):
            pages.append((f"http://127.0.0.2/{c.section}/{k}.html", c))
    return pages


def _change_times(rng: random.Random, rate: float, until: float) -> list[float]:
    times: list[float] = []
    t = rng.expovariate(rate) if rate > 0 else until + 1
    while t < until:
        times.append(t)
        t += rng.expovariate(rate)
    return times


def simulate_freshness(
    policy: str,
    *,
    classes: Sequence[PageClass] = FRESHNESS_CLASSES,
    n_pages: int = 1000,
    budget: float = 0.1,
    cycles: int = 120,
    warmup: int = 20,
    seed: int = 11,
    sample: float = 0.2,
    threshold: float = 0.3,
    max_history: int = 64,
) -> float:
    """Time-averaged freshness (share of pages whose stored copy is current) over cycles
    ``warmup..cycles`` when ``budget`` × pages are revisited at the start of each cycle.

    Changes are Poisson events in continuous time; every policy sees the same events (drawn
    from ``seed``) and learns only what its own visits show (changed since my last visit or
    not), as a crawler does. A page fetched at t stays fresh until its next change.
    """
    rng = random.Random(seed)
    pages = _pages(classes, n_pages)
    index = {url: i for i, (url, _) in enumerate(pages)}
    per_cycle = max(1, round(budget * len(pages)))
    events = [_change_times(rng, c.rate, cycles + 1.0) for _, c in pages]
    fetched_at = [0.0] * len(pages)  # time of the stored copy
    records = [
        PageRecord(url, None, [(0.0, "new")], {"size": c.size, "relevance": 0.5})
        for url, c in pages
    ]

    def next_change(i: int, after: float) -> float:
        ev = events[i]
        k = bisect.bisect_right(ev, after)
        return ev[k] if k < len(ev) else math.inf

    def fetch(urls: Iterable[str], t: float) -> set[str]:
        seen = set()
        for url in urls:
            i = index[url]
            changed = next_change(i, fetched_at[i]) <= t
            fetched_at[i] = t
            rec = records[i]
            rec.history.append((t, "significant" if changed else "unchanged"))
            del rec.history[:-max_history]
            if changed:
                seen.add(url)
        return seen

    fresh: list[float] = []
    for cycle in range(1, cycles + 1):
        t = float(cycle)
        if policy == "cluster":
            plan = plan_clusters(
                records, t, per_cycle, period=1.0, sample=sample, threshold=threshold
            )
            changed = fetch(plan.samples, t)
            fetch(plan.followup(changed), t)
        else:
            fetch(due(records, t, per_cycle, policy, period=1.0), t)
        if cycle > warmup:  # fresh time within [t, t + 1) of each page
            total = 0.0
            for i in range(len(pages)):
                nxt = next_change(i, fetched_at[i])
                total += min(max(nxt - t, 0.0), 1.0)
            fresh.append(total / len(pages))
    return sum(fresh) / len(fresh)


def optimal_freshness(classes: Sequence[PageClass], budget: float) -> float:
    """The best time-averaged freshness ANY policy can reach when it knows every rate
    (Cho & Garcia-Molina's optimal revisit frequencies, found by a greedy marginal allocation
    of the visit budget): the ceiling for the policies above."""
    steps = 4000
    freq = [0.0] * len(classes)  # visits per cycle per page, by class

    def fresh(c: PageClass, f: float) -> float:
        if f <= 0:
            return 0.0
        x = c.rate / f
        return -math.expm1(-x) / x

    unit = budget / steps
    for _ in range(steps):
        best, pick = -1.0, 0
        for i, c in enumerate(classes):  # budget unit spent on class i: share × Δf per page
            df = unit / c.share
            gain = c.share * (fresh(c, freq[i] + df) - fresh(c, freq[i]))
            if gain > best:
                best, pick = gain, i
        freq[pick] += unit / classes[pick].share
    return sum(c.share * fresh(c, f) for c, f in zip(classes, freq, strict=True))


# --- the six-cycle experiment -------------------------------------------------------------------
SIX_TECHNIQUES = ("refetch-all", "last-modified", "size", "hash", "doc-index", "simhash")


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
            partition(res.body, "http://evolving/"), res.body, headers, thresholds=thresholds
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
