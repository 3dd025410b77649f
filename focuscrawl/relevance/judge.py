"""The page judgement of a focused crawl: is a fetched page on topic?

:class:`PageJudge` holds the relevance model and what the crawl calibrates on it: seed and example
pages first teach the topic model, the seeds' mean relevance sets the scale and (with
``auto_threshold``) the threshold, and Otsu calibration moves that threshold as pages come in.
It answers with a :class:`Judgement`. What the link strategy learns from the judgement is not
here (:meth:`focuscrawl.strategy.policy.CrawlPolicy.learn`); no Scrapy import.
"""

from __future__ import annotations

from dataclasses import dataclass

from focuscrawl.blocks.model import Page
from focuscrawl.relevance.base import PageScorer

CALIBRATE_BINS = 80  # histogram of relevance / seed mean over 0..2
CALIBRATE_MIN = 50  # crawled pages before the first calibration
CALIBRATE_EVERY = 25
CALIBRATE_RANGE = (0.2, 0.6)  # the calibrated fraction of the seeds' mean stays in here


def otsu(hist: list[int]) -> int:
    """The bin index ``t`` that best splits ``hist`` into bins ``< t`` and ``>= t`` (Otsu:
    maximal between-class variance; across an empty gap, its middle)."""
    total = sum(hist)
    weighted = sum(i * h for i, h in enumerate(hist))
    best, first, last = -1.0, 0, 0
    n0 = 0
    s0 = 0.0
    for t in range(1, len(hist)):
        n0 += hist[t - 1]
        s0 += (t - 1) * hist[t - 1]
        n1 = total - n0
        if n0 == 0 or n1 == 0:
            continue
        m0, m1 = s0 / n0, (weighted - s0) / n1
        between = n0 * n1 * (m0 - m1) ** 2
        if between > best * (1 + 1e-9):
            best, first, last = between, t, t
        elif between >= best * (1 - 1e-9):
            last = t
    return (first + last + 1) // 2


@dataclass(slots=True)
class Judgement:
    relevance: float
    relevant: bool


class PageJudge:
    def __init__(self, model: PageScorer, auto_threshold: float = 0.0, calibrate: str = "") -> None:
        """``auto_threshold`` > 0: the relevance threshold becomes that fraction of the mean
        relevance of the seed pages, once they are judged (cosine scores of on-topic pages vary
        from topic to topic far more than their ratio to the seeds' scores does).
        ``calibrate`` (with ``auto_threshold``): ``"otsu"`` moves that fraction, every
        :data:`CALIBRATE_EVERY` pages, to the Otsu split of the crawled pages' relevance on the
        seed scale (clamped to :data:`CALIBRATE_RANGE`); ``""``: the fixed fraction."""
        if calibrate not in ("", "otsu"):
            raise ValueError(f"unknown calibration {calibrate!r}; '' or 'otsu'")
        self.model = model
        self.auto_threshold = auto_threshold
        self.calibrate = calibrate
        # the threshold this judge set (the model's until then). Pages are judged by the
        # model's own threshold, which a retraining model may replace with its own; the link
        # scale (the strategy's tunneling budget and block threshold) follows this one.
        self.threshold = model.threshold
        self.seed_scores: list[float] = []  # relevance of each seed page judged
        self.seed_mean = 0.0
        self._hist = [0] * CALIBRATE_BINS  # crawled pages' relevance / seed mean, 0..2

    @property
    def reference(self) -> float | None:
        """The relevance of an on-topic page (the seeds' mean) once known and positive, else
        None: the scale the link scores put page relevance on."""
        return self.seed_mean if self.seed_mean > 0 else None

    def judge(self, page: Page, seed: bool = False, example: bool = False) -> Judgement:
        """Relevance of a fetched page; seed and example pages first teach the topic model.
        With the automatic threshold a seed page is relevant by definition."""
        if seed or example:
            add_text = getattr(self.model, "add_text", None)
            if add_text is not None:
                add_text(f"{page.title}\n{page.main_text}")
        relevance = self.model.score_page(page)
        self.model.observe(page, relevance)
        if seed:
            self.seed_scores.append(relevance)
            self.seed_mean = sum(self.seed_scores) / len(self.seed_scores)
            if self.auto_threshold > 0:
                self.set_threshold(self.auto_threshold * self.seed_mean)
                return Judgement(relevance, True)
        if self.calibrate and self.seed_mean > 0 and self.auto_threshold > 0:
            self._observe(relevance / self.seed_mean)
        return Judgement(relevance, relevance >= self.model.threshold)

    def _observe(self, scaled: float) -> None:
        hist = self._hist
        hist[min(CALIBRATE_BINS - 1, max(0, int(scaled * CALIBRATE_BINS / 2)))] += 1
        n = sum(hist)
        if n >= CALIBRATE_MIN and n % CALIBRATE_EVERY == 0:
            lo, hi = CALIBRATE_RANGE
            fraction = min(hi, max(lo, otsu(hist) * 2 / CALIBRATE_BINS))
            self.set_threshold(fraction * self.seed_mean)

    def set_threshold(self, threshold: float) -> None:
        self.model.threshold = threshold
        self.threshold = threshold
