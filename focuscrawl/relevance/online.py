"""Online retraining during a crawl, off the crawling thread (no Scrapy, no Twisted).

:class:`RetrainingModel` wraps a model and satisfies ``PageScorer``. Every ``every`` observed
pages it retrains a PU model (confident pages of the crawl as positives, the rest unlabelled)
in one worker thread, and swaps the new model in on the next call once training has finished.
The crawling thread never waits for training: it only appends a page's term counts and checks
whether a future is done. Training is pure Python (vectorising) interleaved with the crawl by
the GIL's switch interval, plus liblinear, which runs without the GIL.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from focuscrawl.blocks.model import Page
from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.features import TermCounts, page_terms
from focuscrawl.relevance.model import RelevanceModel
from focuscrawl.relevance.train import MIN_UNLABELED, train_pu

log = logging.getLogger(__name__)

CONFIDENT_FACTOR = 1.5
CONFIDENT_MAX = 0.9


class RetrainingModel:
    def __init__(
        self,
        model: PageScorer,
        keywords: Sequence[str] = (),
        *,
        every: int = 500,
        confident: float | None = None,
        window: int = 5000,
        min_positives: int = 5,
    ) -> None:
        self.model = model
        self.keywords = list(keywords)
        self.every = every
        self.confident = confident
        self.min_positives = min_positives
        self.positives: deque[TermCounts] = deque(maxlen=window)
        self.unlabeled: deque[TermCounts] = deque(maxlen=window)
        self.seen = 0
        self.retrains = 0
        self.failures = 0
        self.last_fit_seconds = 0.0
        self._executor: ThreadPoolExecutor | None = None
        self._future: Future[RelevanceModel] | None = None

    @property
    def threshold(self) -> float:  # type: ignore[override]
        return self.model.threshold

    @threshold.setter
    def threshold(self, value: float) -> None:
        # the crawl's auto threshold (calibrated on the seed pages) applies to the current
        # model; a retrained model brings its own calibrated threshold
        self.model.threshold = value

    @property
    def retraining(self) -> bool:
        """True while a retrain is running."""
        return self._future is not None and not self._future.done()

    @property
    def max_fit_seconds(self) -> float:
        return self.last_fit_seconds

    def confident_score(self) -> float:
        """A page at least this relevant is a positive: ``confident`` when given, else
        ``CONFIDENT_FACTOR`` × the current model's threshold (cosine scores of on-topic pages
        are far below 0.8), at most ``CONFIDENT_MAX``."""
        if self.confident is not None:
            return self.confident
        return min(CONFIDENT_MAX, CONFIDENT_FACTOR * self.model.threshold)

    def _swap(self) -> None:
        fut = self._future
        if fut is None or not fut.done():
            return
        self._future = None
        try:
            self.model = fut.result()
            self.retrains += 1
        except Exception:  # a failed retrain keeps the current model; the crawl goes on
            self.failures += 1
            log.exception("online retraining failed; keeping the current model")

    def score_page(self, page: Page) -> float:
        self._swap()
        return self.model.score_page(page)

    def score_text(self, text: str) -> float:
        return self.model.score_text(text)

    def add_text(self, text: str) -> None:
        """Seed texts go to the wrapped model when it takes them (cosine models)."""
        add_text = getattr(self.model, "add_text", None)
        if add_text is not None:
            add_text(text)

    def observe(self, page: Page, relevance: float) -> None:
        self.model.observe(page, relevance)
        terms = page_terms(page)
        if not terms:
            return
        (self.positives if relevance >= self.confident_score() else self.unlabeled).append(terms)
        self.seen += 1
        if self.seen % self.every == 0:
            self.start_retrain()

    def start_retrain(self) -> bool:
        """Start a retrain in the worker thread; False when one is running or data is short."""
        if self._future is not None and not self._future.done():
            return False
        if len(self.positives) < self.min_positives or len(self.unlabeled) < MIN_UNLABELED:
            return False
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="retrain")
        self._future = self._executor.submit(self._fit, list(self.positives), list(self.unlabeled))
        return True

    def _fit(self, positives: list[TermCounts], unlabeled: list[TermCounts]) -> RelevanceModel:
        t0 = time.perf_counter()
        model = train_pu(positives, unlabeled, self.keywords)
        self.last_fit_seconds = time.perf_counter() - t0
        log.info(
            "retrained on %d confident and %d other pages in %.2fs",
            len(positives),
            len(unlabeled),
            self.last_fit_seconds,
        )
        return model

    def wait(self) -> None:
        """Block until a running retrain is done and swap it in (tests, shutdown)."""
        if self._future is not None:
            self._future.exception()
            self._swap()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
