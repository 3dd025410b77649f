"""Recrawl experiments: change detection on real page versions (the APFC corpus).

``score_versions`` replays consecutive versions of one page and scores the ``significant``
decision of each technique against the labels; see docs/change.md for the figures.
The six-cycle experiment and the freshness simulation live in
:mod:`focuscrawl.evaluation.recrawl_cycles` and :mod:`focuscrawl.change.freshness`.
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
