"""``RelevanceModel``: a trained page classifier, saved as JSON (never pickle).

A learned model (SVM, PU-SVM, PU ensemble) is one linear function of field-weighted TF-IDF
features; its score is a logistic calibration of that function into [0, 1] and a page is
relevant when the score is at least ``threshold`` (0.5). A ``cosine`` model is the fallback when
there is too little to learn from (keywords only, a single example): TF-IDF cosine to the topic.

The file holds data only (vocabulary, IDF, weights, settings, library versions), so loading a
model never executes code, unlike a pickle.
"""

from __future__ import annotations

import gzip
import json
import logging
import math
import platform
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from focuscrawl.blocks.model import Page
from focuscrawl.blocks.partition import partition
from focuscrawl.relevance import rules
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.fastscore import FastLinearScorer
from focuscrawl.relevance.features import LinearTermScorer, TermCounts, page_terms, text_terms

log = logging.getLogger(__name__)

FORMAT = "focuscrawl-relevance-model"
FORMAT_VERSION = 1
KINDS = ("svm", "pu-svm", "pu-ensemble", "cosine")


class ModelFileError(ValueError):
    """The file is not a focuscrawl relevance model (or one this version cannot read)."""


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("focuscrawl", "scikit-learn", "numpy", "scipy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = ""
    return out


class RelevanceModel:
    """Scores pages in [0, 1]; satisfies :class:`focuscrawl.relevance.base.PageScorer`."""

    def __init__(
        self,
        kind: str,
        *,
        vocabulary: Mapping[str, int] | None = None,
        idf: np.ndarray | None = None,
        coef: np.ndarray | None = None,
        intercept: float = 0.0,
        scale: float = 1.0,
        threshold: float = 0.5,
        field_weights: Mapping[str, float] | None = None,
        keywords: Iterable[str] = (),
        cosine: CosineModel | None = None,
        info: dict[str, Any] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown model kind {kind!r} ({', '.join(KINDS)})")
        self.kind = kind
        self.vocabulary = dict(vocabulary or {})
        self.idf = np.asarray(idf if idf is not None else np.zeros(len(self.vocabulary)), float)
        self.coef = np.asarray(coef if coef is not None else np.zeros(len(self.vocabulary)), float)
        self.intercept = float(intercept)
        self.scale = float(scale)
        self.threshold = float(threshold)
        self.field_weights = dict(field_weights or rules.FIELD_WEIGHTS)
        self.keywords = list(keywords)
        self.cosine = cosine
        self.info = dict(info or {})
        if kind == "cosine" and cosine is None:
            raise ValueError("a cosine model needs its CosineModel")
        self._scorer = (
            None
            if kind == "cosine"
            else LinearTermScorer(self.vocabulary, self.idf, self.coef, self.intercept)
        )
        self._fast: FastLinearScorer | None = None  # built on the first page scored

    # --- scoring ---------------------------------------------------------------------------
    def decision_terms(self, terms: TermCounts) -> float:
        """The raw linear decision value (learned models)."""
        assert self._scorer is not None
        return self._scorer.decision(terms)

    def _calibrate(self, decision: float) -> float:
        z = self.scale * decision
        if z < -50:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))

    def score_terms(self, terms: TermCounts) -> float:
        if self._scorer is None:
            raise TypeError("a cosine model scores pages and texts, not term counts")
        return self._calibrate(self._scorer.decision(terms)) if terms else 0.0

    def score_page(self, page: Page) -> float:
        """The page's score (numpy path of :mod:`focuscrawl.relevance.fastscore`; equal to
        :meth:`score_page_terms` up to floating-point summation order)."""
        if self.cosine is not None:
            return self.cosine.score_page(page)
        if self._fast is None:
            self.prepare()
        assert self._fast is not None
        decision = self._fast.decision_page(page)
        if decision is None:
            return self.score_page_terms(page)
        return self._calibrate(decision)

    def prepare(self) -> RelevanceModel:
        """Build the page-scoring tables now rather than on the first page (the online
        retraining worker does, so the crawl process receives them built)."""
        if self.cosine is None and self._fast is None:
            self._fast = FastLinearScorer(
                self.vocabulary, self.idf, self.coef, self.intercept, self.field_weights
            )
        return self

    def score_page_terms(self, page: Page) -> float:
        """The page's score through its term counts (the reference for the fast path)."""
        if self.cosine is not None:
            return self.cosine.score_page(page)
        return self.score_terms(page_terms(page, self.field_weights))

    def score_text(self, text: str) -> float:
        if self.cosine is not None:
            return self.cosine.score_text(text)
        return self.score_terms(text_terms(text, self.field_weights))

    def observe(self, page: Page, relevance: float) -> None:
        if self.cosine is not None:
            self.cosine.observe(page, relevance)

    def score(self, html: str | bytes, url: str) -> float:
        """Relevance of an HTML page in [0, 1]; 0.0 for an empty or unparsable page."""
        page = partition(html, url)
        if page.error:
            log.debug("not scoring %s: %s", url, page.error)
            return 0.0
        return self.score_page(page)

    def is_relevant(self, html: str | bytes, url: str) -> bool:
        return self.score(html, url) >= self.threshold

    # --- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "kind": self.kind,
            "libraries": library_versions(),
            "features": {
                "field_weights": self.field_weights,
                "tokenizer": "fast_tokens/1",
                "tf": "sublinear",
                "norm": "l2",
            },
            "keywords": self.keywords,
            "threshold": self.threshold,
            "info": self.info,
        }
        if self.cosine is not None:
            data["cosine"] = {"profile": self.cosine.profile, "threshold": self.cosine.threshold}
        else:
            terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
            data.update(
                vocabulary=terms,
                idf=self.idf.tolist(),
                coef=self.coef.tolist(),
                intercept=self.intercept,
                scale=self.scale,
            )
        return data

    def save(self, path: str | Path) -> None:
        """Write the model as JSON (gzip-compressed when ``path`` ends in ``.gz``)."""
        text = json.dumps(self.to_dict(), separators=(",", ":"))
        path = Path(path)
        if path.suffix == ".gz":
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text, encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Any, source: str = "model") -> RelevanceModel:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ModelFileError(
                f"{source} is not a focuscrawl relevance model (train one with `focuscrawl train`)"
            )
        version = data.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ModelFileError(
                f"{source} is a model of format version {version!r}; this "
                f"focuscrawl reads up to {FORMAT_VERSION}: retrain or upgrade"
            )
        try:
            kind = data["kind"]
            features = data.get("features", {})
            common = dict(
                threshold=float(data["threshold"]),
                keywords=data.get("keywords", []),
                field_weights=features.get("field_weights"),
                info=data.get("info", {}),
            )
            if kind == "cosine":
                cos = CosineModel(threshold=float(data["cosine"]["threshold"]))
                cos.profile = {str(k): float(v) for k, v in data["cosine"]["profile"].items()}
                return cls(kind, cosine=cos, **common)
            terms = data["vocabulary"]
            idf, coef = np.asarray(data["idf"], float), np.asarray(data["coef"], float)
            if not (len(terms) == len(idf) == len(coef)):
                raise ModelFileError(f"{source}: vocabulary, idf and coef lengths differ")
            return cls(
                kind,
                vocabulary={t: i for i, t in enumerate(terms)},
                idf=idf,
                coef=coef,
                intercept=float(data["intercept"]),
                scale=float(data["scale"]),
                **common,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, ModelFileError):
                raise
            raise ModelFileError(f"{source}: damaged focuscrawl model ({exc!r})") from exc

    @classmethod
    def load(cls, path: str | Path) -> RelevanceModel:
        """Read a model saved by :meth:`save`; :class:`ModelFileError` for anything else."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ModelFileError(f"cannot read model {path}: {exc.strerror or exc}") from exc
        try:
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            data = json.loads(raw.decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, EOFError) as exc:
            raise ModelFileError(
                f"{path} is not a focuscrawl relevance model (not JSON: {exc.__class__.__name__})"
            ) from exc
        model = cls.from_dict(data, str(path))
        saved = data.get("libraries", {}).get("focuscrawl")
        current = library_versions().get("focuscrawl")
        if saved and current and saved != current:
            log.info("model %s was trained with focuscrawl %s (this is %s)", path, saved, current)
        return model

    def __repr__(self) -> str:
        return (
            f"RelevanceModel(kind={self.kind!r}, terms={len(self.vocabulary)}, "
            f"threshold={self.threshold})"
        )
