"""HITS (Kleinberg's hubs and authorities) over the fetched graph: the link analysis that seed 001
compares Shark-Search with link-block weights against. No Scrapy import.

The graph holds the fetched pages (the hubs) and every URL they link to (the authorities,
fetched or queued). Edge ``p → u`` has weight ``w(p)``, the hub weight of ``p``: in the
topic-weighted variant (the default, as a focused crawler uses HITS) ``w(p)`` is the page's
relevance on the seed scale when it was judged relevant and 0 otherwise, so only relevant
pages confer authority; plain HITS gives every fetched page ``w = 1``. Every ``every`` pages
:meth:`HitsGraph.recompute` runs the power iteration ``a = Mᵀh``, ``h = Ma`` (each scaled to a
maximum of 1) to convergence or ``iterations`` rounds. Between two runs a new page gets the hub
score its links earn from the last authorities (one half-step, ``h(p) = w(p)·Σ a(u) / hub norm``)
and adds ``w(p)·h(p)`` to each target's authority: the frontier can order the links of every new
page without waiting for the next run.

Bounded: at most ``max_pages`` hub pages (the least weighted are forgotten when more come) and
``max_nodes`` URLs (past it the URLs no kept page links to are forgotten); each run is
``O(iterations × edges)`` with ``numpy.bincount`` (no SciPy).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

import numpy as np

_EMPTY = np.zeros(0, dtype=np.int64)


class HitsGraph:
    """Hubs and authorities of the fetched graph, recomputed every ``every`` pages."""

    def __init__(
        self,
        every: int = 50,
        iterations: int = 50,
        tolerance: float = 1e-6,
        max_pages: int = 50_000,
        max_nodes: int = 1_000_000,
    ) -> None:
        if every < 1 or iterations < 1:
            raise ValueError("every and iterations must be at least 1")
        self.every = every
        self.iterations = iterations
        self.tolerance = tolerance
        self.max_pages = max_pages
        self.max_nodes = max_nodes
        self._ids: dict[str, int] = {}
        self._urls: list[str] = []
        self._fetched = np.zeros(1024, dtype=bool)
        self._raw = np.zeros(1024)  # authority before scaling: Σ w(p)·h(p) over p → u
        self._pages: dict[int, tuple[float, np.ndarray]] = {}  # hub page → (weight, targets)
        self._hub: dict[int, float] = {}  # hub score of each page (scaled like the last run)
        self._weakest: list[tuple[float, int]] = []  # (weight, page): which hub goes first
        self.hub_norm = 0.0  # max of M·a at the last run; 0: no run yet
        self.auth_norm = 1.0  # max of Mᵀ·h at the last run
        self.runs = 0  # completed recomputations (the frontier's epoch)
        self.last_iterations = 0
        self._since = 0  # pages added since the last run

    # -- building -------------------------------------------------------------------------
    def _id(self, url: str) -> int:
        i = self._ids.get(url)
        if i is None:
            i = self._ids[url] = len(self._urls)
            self._urls.append(url)
            if i >= len(self._fetched):  # both arrays grow together, doubling
                size = len(self._fetched)
                self._raw = np.concatenate([self._raw, np.zeros(size)])
                self._fetched = np.concatenate([self._fetched, np.zeros(size, bool)])
        return i

    def add_page(self, url: str, targets: Iterable[str], weight: float) -> None:
        """A fetched page and the distinct URLs it links to (self-links left out)."""
        page = self._id(url)
        self._fetched[page] = True
        self._since += 1
        if weight <= 0:
            return  # confers no authority: not a hub
        ids = np.fromiter(
            {self._id(u) for u in targets if u != url}, dtype=np.int64
        )  # a set: one edge per target
        if page not in self._pages:
            heapq.heappush(self._weakest, (weight, page))
        self._pages[page] = (weight, ids)
        if self.hub_norm > 0:  # one half-step from the last authorities
            hub = weight * float(self._raw[ids].sum()) / self.auth_norm / self.hub_norm
        else:
            hub = 1.0  # before the first run: every hub counts 1 (weighted in-degree)
        self._hub[page] = hub
        if len(ids):
            self._raw[ids] += weight * hub
        if len(self._pages) > self.max_pages:
            self._forget_weakest()

    def _forget_weakest(self) -> None:
        while True:
            weight, page = heapq.heappop(self._weakest)
            if page in self._pages and self._pages[page][0] == weight:
                break
        weight, ids = self._pages.pop(page)
        self._raw[ids] -= weight * self._hub.pop(page, 0.0)
        np.maximum(self._raw[ids], 0.0, out=self._raw[ids])

    @property
    def due(self) -> bool:
        """``every`` pages were added since the last run."""
        return self._since >= self.every

    # -- the power iteration --------------------------------------------------------------
    def recompute(self) -> int:
        """Hubs and authorities to convergence (at most ``iterations`` rounds); returns the
        rounds it took. Also compacts the URL table past ``max_nodes``."""
        self._since = 0
        if len(self._urls) > self.max_nodes:
            self._compact()
        n = len(self._urls)
        pages = list(self._pages)
        if not pages:
            self.runs += 1
            return 0
        sizes = np.array([len(self._pages[p][1]) for p in pages])
        rows = np.repeat(np.arange(len(pages)), sizes)
        cols = np.concatenate([self._pages[p][1] for p in pages]) if len(rows) else _EMPTY
        w = np.repeat(np.array([self._pages[p][0] for p in pages]), sizes)
        h = np.ones(len(pages))
        a = np.zeros(n)
        hub_norm = 0.0
        rounds = 0
        for rounds in range(1, self.iterations + 1):  # noqa: B007 (the count is returned)
            a = np.bincount(cols, weights=w * h[rows], minlength=n)
            top = a.max() if n else 0.0
            if top <= 0:
                break
            a /= top
            h_new = np.bincount(rows, weights=w * a[cols], minlength=len(pages))
            hub_norm = float(h_new.max())
            if hub_norm <= 0:
                break
            h_new /= hub_norm
            done = float(np.abs(h_new - h).max()) < self.tolerance
            h = h_new
            if done:
                break
        raw = np.bincount(cols, weights=w * h[rows], minlength=n)
        self._raw = np.concatenate([raw, np.zeros(len(self._fetched) - n)])
        self.auth_norm = float(raw.max()) if n and raw.max() > 0 else 1.0
        self.hub_norm = hub_norm
        self._hub = {p: float(v) for p, v in zip(pages, h, strict=True)}
        self.runs += 1
        self.last_iterations = rounds
        return rounds

    def _compact(self) -> None:
        """Keep the hub pages, fetched URLs and URLs a hub links to; forget the rest."""
        keep = set(self._pages)
        for _, ids in self._pages.values():
            keep.update(ids.tolist())
        keep.update(int(i) for i in np.flatnonzero(self._fetched[: len(self._urls)]))
        order = sorted(keep)
        remap = np.full(len(self._urls), -1, dtype=np.int64)
        remap[order] = np.arange(len(order))
        urls = [self._urls[i] for i in order]
        fetched = self._fetched[order]
        self._urls = urls
        self._ids = {u: i for i, u in enumerate(urls)}
        size = max(1024, 2 * len(urls))
        self._fetched = np.zeros(size, dtype=bool)
        self._fetched[: len(urls)] = fetched
        self._raw = np.zeros(size)
        self._pages = {int(remap[p]): (w, remap[ids]) for p, (w, ids) in self._pages.items()}
        self._hub = {int(remap[p]): v for p, v in self._hub.items()}
        self._weakest = [(w, p) for p, (w, _) in self._pages.items()]
        heapq.heapify(self._weakest)

    # -- reading --------------------------------------------------------------------------
    def authority(self, url: str) -> float:
        """The URL's authority on the scale of the last run (1 = the best authority then)."""
        i = self._ids.get(url)
        return 0.0 if i is None else float(self._raw[i]) / self.auth_norm

    def hub(self, url: str) -> float:
        """The fetched page's hub score (0 when it is no hub)."""
        i = self._ids.get(url)
        return 0.0 if i is None else self._hub.get(i, 0.0)

    def top_unfetched(self, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` not-yet-fetched URLs of highest authority (> 0), best first."""
        n = len(self._urls)
        scores = np.where(self._fetched[:n], 0.0, self._raw[:n])
        positive = np.flatnonzero(scores > 0)
        if len(positive) > limit:
            positive = positive[np.argpartition(-scores[positive], limit - 1)[:limit]]
        positive = positive[np.argsort(-scores[positive], kind="stable")]
        return [(self._urls[i], float(scores[i]) / self.auth_norm) for i in positive]

    def __len__(self) -> int:
        return len(self._urls)
