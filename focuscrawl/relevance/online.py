"""Online retraining during a crawl, in a separate process (no Scrapy, no Twisted).

:class:`RetrainingModel` wraps a model and satisfies ``PageScorer``. Every ``every`` observed
pages it retrains a PU model (confident pages of the crawl as positives, the rest unlabelled)
and swaps the new model in on the next page scored once training has finished.

Training runs in a worker process (``multiprocessing``, *spawn*: no fork of a running reactor),
so it never holds the crawl's GIL. A training thread in the same process did: its pure-Python
vectorising took turns with the crawl and stalled the reactor for hundreds of milliseconds
(a test-web crawl: 316 ms at worst, 93 ms on average while a retrain ran). The crawl thread
only

* puts each observed page on the worker's queue as its field texts (a few strings: pickling
  them is a copy; a feeder thread writes them to the pipe), and
* on each page scored, polls the result queue without blocking; a finished model arrives
  pickled with its scoring tables already built (see :meth:`RelevanceModel.prepare`).

The worker keeps the training window (the last ``window`` positives and unlabelled pages), so
nothing is sent in bulk. It fits in a thread of its own while it goes on reading pages, at a
lower CPU priority (``niceness``) than the crawl. If the worker dies (killed, out of memory),
the crawl logs it, counts it in ``worker_deaths`` and ``failures``, keeps the current model and
starts a new worker, whose window fills again from the pages that follow; after
``MAX_WORKER_DEATHS`` deaths it stops retraining.
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing as mp
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from focuscrawl.blocks.model import Page
from focuscrawl.relevance import rules
from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.fastscore import field_groups
from focuscrawl.relevance.features import TermCounts
from focuscrawl.text import fast_tokens

log = logging.getLogger(__name__)

CONFIDENT_FACTOR = 1.5
CONFIDENT_MAX = 0.9
#: After this many worker deaths retraining is given up (a worker that cannot start — e.g. a
#: script without the ``if __name__ == "__main__":`` guard that *spawn* needs — would otherwise
#: be restarted over and over); the crawl goes on with its current model.
MAX_WORKER_DEATHS = 3
#: The crawl checks that the worker is alive every this many observed pages.
CHECK_EVERY = 50
MIN_UNLABELED = 10  # as focuscrawl.relevance.train.MIN_UNLABELED (not imported: sklearn)
#: The last this many observed pages are scored again by each retrained model and their new
#: relevance sent back, so that the crawl re-scores the links it queued from them.
RESCORE_PAGES = 1000
#: The user's labels a worker keeps (URL → on topic), and labelled pages whose texts it keeps.
MAX_WORKER_LABELS = 100_000
MAX_LABELLED_PAGES = 2000

Groups = list[tuple[float, str]]
Window = deque[tuple[str, Groups]]


def group_terms(groups: Groups) -> TermCounts:
    """``page_terms`` of a page from its :func:`field_groups` (same counts, up to the order
    in which weights are summed)."""
    counts: TermCounts = {}
    for weight, text in groups:
        for w in fast_tokens(text):
            counts[w] = counts.get(w, 0.0) + weight
    return counts


def _fit_and_send(
    outbox: Any,
    seq: int,
    positives: list[Groups],
    unlabeled: list[Groups],
    keywords: list[str],
    on_topic: list[Groups] = (),  # type: ignore[assignment]
    off_topic: list[Groups] = (),  # type: ignore[assignment]
    recent: list[tuple[str, Groups]] = (),  # type: ignore[assignment]
    threshold_rule: str = "balanced",
) -> None:
    """Fit (PU; with labels :func:`focuscrawl.relevance.feedback.train_from_labels`), then
    score the ``recent`` pages with the new model; send both to the crawl."""
    from focuscrawl.relevance.feedback import train_from_labels
    from focuscrawl.relevance.train import train_pu

    t0 = time.perf_counter()
    try:
        pos = [group_terms(g) for g in positives]
        unl = [group_terms(g) for g in unlabeled]
        if on_topic or off_topic:
            on = [group_terms(g) for g in on_topic]
            off = [group_terms(g) for g in off_topic]
            model = train_from_labels(pos, unl, on, off, keywords, threshold_rule=threshold_rule)
        else:
            model = train_pu(pos, unl, keywords)
        model.prepare()  # scoring tables built here, not in the crawl process
        rescored = [(url, model.score_terms(group_terms(g))) for url, g in recent]
        outbox.put(
            (
                "model",
                seq,
                model,
                time.perf_counter() - t0,
                len(positives) + len(on_topic),
                len(unlabeled),
                rescored,
                (len(on_topic), len(off_topic)),
            )
        )
    except Exception as exc:  # reported to the crawl, which keeps its model
        outbox.put(("error", seq, f"{exc.__class__.__name__}: {exc}"))


class WorkerWindow:
    """What the worker knows: the training window of pages (URL and field texts), the user's
    labels and the texts of labelled pages (kept past the window, capped)."""

    def __init__(self, window: int) -> None:
        self.positives: Window = deque(maxlen=window)
        self.unlabeled: Window = deque(maxlen=window)
        self.recent: Window = deque(maxlen=RESCORE_PAGES)
        self.labels: dict[str, bool] = {}
        self.labelled: dict[str, Groups] = {}

    def page(self, positive: bool, groups: Groups, url: str) -> None:
        (self.positives if positive else self.unlabeled).append((url, groups))
        self.recent.append((url, groups))
        if url in self.labels:
            self._keep(url, groups)

    def label(self, url: str, on_topic: bool) -> None:
        if url not in self.labels and len(self.labels) >= MAX_WORKER_LABELS:
            return
        self.labels[url] = on_topic
        if url not in self.labelled:
            for u, g in (*self.positives, *self.unlabeled):
                if u == url:
                    self._keep(url, g)
                    break

    def _keep(self, url: str, groups: Groups) -> None:
        if url in self.labelled or len(self.labelled) < MAX_LABELLED_PAGES:
            self.labelled[url] = groups

    def training_set(self) -> tuple[list[Groups], ...]:
        """Positives and unlabelled pages not labelled; on-topic and off-topic labelled pages."""
        labels = self.labels
        pos = [g for u, g in self.positives if u not in labels]
        unl = [g for u, g in self.unlabeled if u not in labels]
        on = [g for u, g in self.labelled.items() if labels.get(u) is True]
        off = [g for u, g in self.labelled.items() if labels.get(u) is False]
        return pos, unl, on, off


def serve(
    inbox: Any,
    outbox: Any,
    keywords: list[str],
    window: int,
    niceness: int,
    threshold_rule: str = "balanced",
) -> None:
    """The worker process: keep the window of pages and the labels; fit when asked, in a
    thread (``threshold_rule``: :func:`focuscrawl.relevance.feedback.label_threshold`'s)."""
    with contextlib.suppress(OSError):
        os.nice(niceness)
    outbox.cancel_join_thread()  # exit without waiting for the crawl to read a pending model
    known = WorkerWindow(window)
    fitting: threading.Thread | None = None
    while True:
        msg = inbox.get()
        if msg[0] == "page":
            known.page(msg[1], msg[2], msg[3] if len(msg) > 3 else "")
        elif msg[0] == "label":
            known.label(msg[1], msg[2])
        elif msg[0] == "fit":
            if fitting is not None and fitting.is_alive():
                outbox.put(("error", msg[1], "a retrain is already running"))
                continue
            pos, unl, on, off = known.training_set()
            args = (outbox, msg[1], pos, unl, keywords, on, off, list(known.recent), threshold_rule)
            fitting = threading.Thread(target=_fit_and_send, args=args, daemon=True)
            fitting.start()
        elif msg[0] == "stop":
            return


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
        niceness: int = 10,
        sync: bool = False,
        threshold_rule: str = "balanced",
        judge_only: bool = False,
        veto: bool = True,
        leniency: float = 1.0,
    ) -> None:
        """``sync``: a retrain asked for is waited for and swapped in at once (:meth:`wait`):
        the same crawl learns at the same page every time. ``threshold_rule``: how a model
        retrained from labels puts its threshold (:data:`focuscrawl.relevance.feedback.
        THRESHOLD_RULES`). ``judge_only``: a retrained model only decides which pages are
        relevant; the wrapped model (``base``) keeps everything else — the relevance it
        reports (raised to its threshold, or put just below it, where the retrained model
        disagrees), its threshold and calibration, the scores of link texts, its top terms and
        its own learning — so that the link scores keep the scale they were tuned on."""
        self.model = model
        self.base = model
        self.judge_only = judge_only
        self.veto = veto
        self.leniency = leniency  # judge_only: relevant from leniency × the model's threshold
        self._base_recent: dict[str, float] = {}  # judge_only: URL → the base's relevance
        self.sync = sync
        self.keywords = list(keywords)
        self.every = every
        self.confident = confident
        self.window = window
        self.min_positives = min_positives
        self.niceness = niceness
        self.threshold_rule = threshold_rule
        self.n_positives = 0  # pages in the worker's window
        self.n_unlabeled = 0
        self.seen = 0
        self.retrains = 0
        self.failures = 0
        self.worker_deaths = 0
        self.last_fit_seconds = 0.0
        self.max_fit_seconds = 0.0
        self._proc: Any = None
        self._inbox: Any = None
        self._outbox: Any = None
        self._pending: int | None = None  # the fit asked for and not answered
        self._seq = 0
        self.gave_up = False  # retraining stopped after MAX_WORKER_DEATHS deaths
        self.labels: dict[str, bool] = {}  # the user's labels, sent again to a new worker
        self.label_retrains = 0  # retrains that learned from labels
        self.label_retrains_asked = 0  # retrains asked for because labels changed
        self._labels_due = False  # labels changed since the last retrain was asked for
        self._labelled_seen: set[str] = set()  # labelled pages the worker has seen
        self._rescored: list[tuple[str, float]] = []
        self.trained_labels = (0, 0)  # on / off topic labels of the current model

    @property
    def threshold(self) -> float:  # type: ignore[override]
        return self.base.threshold if self.judge_only else self.model.threshold

    @threshold.setter
    def threshold(self, value: float) -> None:
        # the crawl's auto threshold (calibrated on the seed pages) applies to the model it
        # was calibrated for; a retrained model brings its own calibrated threshold, on its own
        # scale, which the judge's next calibration (cosine scores / the seeds' mean cosine)
        # would otherwise overwrite
        if self.judge_only:
            self.base.threshold = value
        elif self.retrains == 0:
            self.model.threshold = value

    @property
    def deciding(self) -> bool:
        """True when a retrained model decides (``judge_only``) over the base's relevance."""
        return self.judge_only and self.model is not self.base

    def _decide(self, base_relevance: float, relevant: bool) -> float:
        """The base's relevance moved to the side of its threshold the retrained model says."""
        t = self.base.threshold
        if relevant:
            return max(base_relevance, t)
        if not self.veto:
            return base_relevance
        return min(base_relevance, math.nextafter(t, -math.inf))

    @property
    def retraining(self) -> bool:
        """True while a retrain is running."""
        return self._pending is not None

    @property
    def requests(self) -> int:
        """Retrains asked of the worker so far."""
        return self._seq

    @property
    def worker_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def confident_score(self) -> float:
        """A page at least this relevant is a positive: ``confident`` when given, else
        ``CONFIDENT_FACTOR`` × the current model's threshold (cosine scores of on-topic pages
        are far below 0.8), at most ``CONFIDENT_MAX``."""
        if self.confident is not None:
            return self.confident
        return min(CONFIDENT_MAX, CONFIDENT_FACTOR * self.threshold)

    # --- the worker ------------------------------------------------------------------------
    def _start_worker(self) -> None:
        ctx = mp.get_context("spawn")
        self._inbox, self._outbox = ctx.Queue(), ctx.Queue()
        self._proc = ctx.Process(
            target=serve,
            args=(
                self._inbox,
                self._outbox,
                self.keywords,
                self.window,
                self.niceness,
                self.threshold_rule,
            ),
            name="focuscrawl-retrain",
            daemon=True,
        )
        self._proc.start()
        self.n_positives = self.n_unlabeled = 0
        for url, on_topic in self.labels.items():
            self._inbox.put(("label", url, on_topic))

    def _discard_worker(self) -> None:
        for q in (self._inbox, self._outbox):
            if q is not None:
                q.cancel_join_thread()
                q.close()
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.terminate()
            self._proc.join(timeout=5)
        self._proc = self._inbox = self._outbox = None
        self._pending = None

    def _worker_died(self) -> None:
        code = self._proc.exitcode if self._proc is not None else None
        self.worker_deaths += 1
        self.failures += 1
        self.gave_up = self.worker_deaths >= MAX_WORKER_DEATHS
        log.error(
            "online retraining worker died (exit code %s); keeping the current model%s",
            code,
            f"; retraining stops after {self.worker_deaths} deaths"
            if self.gave_up
            else " and starting a new worker",
        )
        self._discard_worker()

    def _alive(self) -> bool:
        if self._proc is None:
            return False
        if self._proc.is_alive():
            return True
        self._worker_died()
        return False

    def _handle(self, msg: tuple) -> None:
        if msg[1] != self._pending:
            return  # an answer to a request given up on
        self._pending = None
        if msg[0] == "model":
            self.model = msg[2]
            self.retrains += 1
            if len(msg) > 6:
                self._rescored = msg[6]
                self.trained_labels = msg[7]
                if sum(msg[7]):
                    self.label_retrains += 1
            self.last_fit_seconds = msg[3]
            self.max_fit_seconds = max(self.max_fit_seconds, msg[3])
            log.info(
                "retrained on %d confident and %d other pages in %.2fs (worker process)",
                msg[4],
                msg[5],
                msg[3],
            )
        else:
            self.failures += 1
            log.error("online retraining failed (%s); keeping the current model", msg[2])

    def _poll(self) -> None:
        if self._pending is None:
            return
        try:
            msg = self._outbox.get_nowait()
        except queue.Empty:
            self._alive()  # a dead worker: counted, the current model stays
            return
        self._handle(msg)

    # --- PageScorer ------------------------------------------------------------------------
    def score_page(self, page: Page) -> float:
        self._poll()
        if not self.judge_only:
            return self.model.score_page(page)
        relevance = self.base.score_page(page)
        recent = self._base_recent
        recent[page.url] = relevance
        if len(recent) > 2 * RESCORE_PAGES:
            for url in list(recent)[: len(recent) - RESCORE_PAGES]:
                del recent[url]
        if self.model is self.base:
            return relevance
        cut = self.leniency * self.model.threshold
        return self._decide(relevance, self.model.score_page(page) >= cut)

    def score_text(self, text: str) -> float:
        return (self.base if self.judge_only else self.model).score_text(text)

    def top_terms(self, page: Page, n: int) -> list[str] | None:
        """The wrapped model's top terms of ``page`` (cosine models; ``None`` otherwise): the
        link policy's body-word model learns from them, as without the wrapper."""
        model = self.base if self.judge_only else self.model
        top_terms = getattr(model, "top_terms", None)
        return top_terms(page, n) if top_terms is not None else None

    def add_text(self, text: str) -> None:
        """Seed texts go to the wrapped model when it takes them (cosine models)."""
        add_text = getattr(self.base if self.judge_only else self.model, "add_text", None)
        if add_text is not None:
            add_text(text)

    def observe(self, page: Page, relevance: float) -> None:
        (self.base if self.judge_only else self.model).observe(page, relevance)
        if self.gave_up:
            return
        groups = field_groups(page, rules.FIELD_WEIGHTS)
        if not groups:
            return
        if self._proc is None:
            self._start_worker()
        elif self.seen % CHECK_EVERY == 0 and not self._alive():
            return
        positive = relevance >= self.confident_score()
        self._inbox.put(("page", positive, groups, page.url))
        if page.url in self.labels and page.url not in self._labelled_seen:
            # a labelled page's texts reach the worker: the next retrain learns its label
            if len(self._labelled_seen) < MAX_LABELLED_PAGES:
                self._labelled_seen.add(page.url)
            self._labels_due = True
        if positive:
            self.n_positives = min(self.window, self.n_positives + 1)
        else:
            self.n_unlabeled = min(self.window, self.n_unlabeled + 1)
        self.seen += 1
        if self._labels_due and self.start_retrain():
            self._labels_due = False
            self.label_retrains_asked += 1
        elif self.every and self.seen % self.every == 0:
            self.start_retrain()
        else:
            return
        if self.sync:
            self.wait()

    def label(self, url: str, on_topic: bool) -> None:
        """The user's label of ``url``: sent to the worker, and a retrain asked for on the next
        page observed (once no retrain is running and there are pages to learn from)."""
        if self.labels.get(url) is on_topic:
            return
        if url not in self.labels and len(self.labels) >= MAX_WORKER_LABELS:
            return
        self.labels[url] = on_topic
        self._labels_due = True
        if self._proc is not None and not self.gave_up:
            self._inbox.put(("label", url, on_topic))

    def take_rescored(self) -> list[tuple[str, float]]:
        """The last retrained model's relevance of the recently observed pages (URL, score),
        each list handed out once (the crawl re-scores their links)."""
        out, self._rescored = self._rescored, []
        if self.deciding and out:
            known, t = self._base_recent, self.leniency * self.model.threshold
            out = [(u, self._decide(known[u], p >= t)) for u, p in out if u in known]
        return out

    def start_retrain(self) -> bool:
        """Ask the worker for a retrain; False when one is running or data is short."""
        if self._pending is not None or not self._alive():
            return False
        if self.n_positives < self.min_positives or self.n_unlabeled < MIN_UNLABELED:
            return False
        self._seq += 1
        self._pending = self._seq
        self._inbox.put(("fit", self._seq))
        return True

    def wait(self, timeout: float = 300.0) -> None:
        """Block until a running retrain is answered and swap it in (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        while self._pending is not None and time.monotonic() < deadline:
            try:
                msg = self._outbox.get(timeout=0.2)
            except queue.Empty:
                self._alive()
                continue
            self._handle(msg)

    def close(self) -> None:
        """Stop the worker (a fit in progress is abandoned)."""
        if self._proc is None:
            return
        try:
            self._inbox.put(("stop",))
            self._proc.join(timeout=2)
        finally:
            self._discard_worker()
