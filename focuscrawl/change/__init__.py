"""Change detection and recrawl policy (no Scrapy): fingerprints, classification, estimators,
cluster sampling, and the change stores (SQLite, Redis)."""

from __future__ import annotations

from focuscrawl.change.classify import STATUSES, Change, Thresholds, classify, compare
from focuscrawl.change.fingerprint import Fingerprints, fingerprint
from focuscrawl.change.simhash import hamming, simhash64

__all__ = [
    "STATUSES",
    "Change",
    "Fingerprints",
    "Thresholds",
    "classify",
    "compare",
    "fingerprint",
    "hamming",
    "simhash64",
]
