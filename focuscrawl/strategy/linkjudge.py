"""The online link judge: predicts whether a queued link leads to a relevant page, learning
during the crawl from the crawl's own judgements of the pages it fetches.

- **Model**: logistic regression over hashed features (:mod:`focuscrawl.strategy.linkfeatures`:
  anchor and URL words, link-context words, host, block signature, the signature on its host,
  the linking page's kind and relevance band) plus a few numbers (:data:`~.linkfeatures.NUMERIC`:
  the linking page's relevance, the Shark-Search score, in-link votes of relevant and of
  irrelevant pages, the yields so far of the link's block on its page, of its (host, block
  signature) arm and of its host). AdaGrad steps, one per judged page, on a fixed-size weight
  array (``2**bits`` floats).
- **Credit**: a judged page labels the link that first led to it (its features are kept in the
  candidate table, keyed by URL, as long as it is queued), and its outcome counts for the block it
  was found in, for that block's (host, signature) arm and for its host — so its siblings still
  queued rise or sink at the next re-score; every relevant or irrelevant page that links to a
  queued URL counts as an in-link vote.
- **Exploration**: a UCB bonus per (host, block signature) arm, ``c·sqrt(ln(1 + N) / (1 + n))``
  (``n`` pages judged from that arm, ``N`` in all): an arm that was never sampled gains the most,
  and gains more as the crawl goes on, so that no host or block kind starves.
- **Staleness**: a frontier only raises a queued URL's score. Every ``rescore_every`` judged
  pages the judge re-scores every row of its table with the current model and returns the
  ``rescore_top`` best; the policy sends them again one *epoch* higher (``epoch × EPOCH_STEP`` is
  added to every score it gives), so the frontier's head is always ordered by the current model
  and a link scored by an old model sinks below the re-scored ones instead of staying ahead.
- **Bounded memory**: the weights, the arm statistics (hashed into ``2**arm_bits`` slots) and
  the candidate table (``capacity`` rows; past it the lowest-scored quarter is dropped — they stay
  in the frontier, only unscored by later models) are fixed-size arrays; :meth:`nbytes` adds
  them up.

No Scrapy import; numpy only.
"""

from __future__ import annotations

import copy
import math
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from focuscrawl.strategy import judgekernels
from focuscrawl.strategy.compiled import kernels
from focuscrawl.strategy.linkfeatures import N_NUMERIC, NUMERIC

try:  # the ufuncs np.clip and ndarray.sum end in, without their Python wrappers (same values)
    from numpy._core.umath import clip as _clip
except ImportError:  # numpy < 2
    from numpy.core.umath import clip as _clip
_sum = np.add.reduce

GATE_FACTORS = (0.0, 0.5, 1.0, 2.0)  # the model's weight × one of these (the gate)
GATE_MIN = 10  # outcomes of each class in the gate's window before it moves
EPOCH_STEP = 64.0  # above any score within an epoch (scores are clipped below it)

_COL = {name: i for i, name in enumerate(NUMERIC)}
_STATIC = ("bias", "parent_relevance", "parent_relevant", "shark", "words", "noise")
_SHARK = _STATIC.index("shark")
_STATIC_COLS = [_COL[name] for name in _STATIC]
_INLINK_COLS = [_COL["irr_in"], _COL["rel_in"]]  # the columns of inlinks[:, 0] and [:, 1]
_YIELD_COLS = [_COL[name] for name in ("block_yield", "arm_yield", "host_yield")]
# the columns judgekernels.numbers fills (``_numbers``): the static ones but the last, the
# in-links (relevant, irrelevant: ``inlinks`` reversed), the yields, and noise last
assert [*range(len(_STATIC) - 1), judgekernels.N_COLUMNS - 1] == _STATIC_COLS
assert [_COL["rel_in"] + 1, _COL["rel_in"]] == _INLINK_COLS == [6, 5]
assert _YIELD_COLS == [7, 8, 9] and N_NUMERIC == judgekernels.N_COLUMNS
_INLINKS = slice(5, 7)


class LinkJudge:
    def __init__(
        self,
        *,
        bits: int = 18,
        arm_bits: int = 16,
        capacity: int = 50_000,
        max_ids: int = 32,
        weight: float = 3.0,
        rate: float = 0.2,
        explore: float = 0.05,
        smoothing: float = 2.0,
        rescore_every: int = 25,
        rescore_top: int = 200,
        min_examples: int = 5,
        replay: int = 4096,
        passes: int = 2,
        l2: float = 1e-3,
        hashed: bool = True,
        confidence: float = 0.0,
        gate: bool = False,
        gate_window: int = 500,
        compiled: bool | None = None,
    ) -> None:
        """``weight``: the model's probability is added to the link's Shark-Search score × this;
        ``rate``: AdaGrad's step; ``explore``: the UCB constant ``c``; ``smoothing``: the yields'
        prior strength in pages (towards the crawl's share of relevant pages); ``compiled``:
        the row sums and AdaGrad updates compiled (``_cjudge``; None: when built, False: their
        NumPy twins, the same values)."""
        self._k = kernels(compiled)
        self.weight = weight
        # the model's weight grows with the pages judged: weight × n / (n + confidence)
        self.confidence = confidence
        # the gate: the model's weight × the factor of GATE_FACTORS whose order of the last
        # ``gate_window`` credited links (Shark-Search score + weight × factor × P, P as the
        # model said before it learned the link's outcome) ranked their outcomes best
        self.gate = gate
        self.factor = 1.0
        self._pq = np.zeros((gate_window, 3))  # shark, P, outcome: a ring
        self._pqn = 0
        self.rate = rate
        self.explore = explore
        self.smoothing = smoothing
        self.rescore_every = rescore_every
        self.rescore_top = rescore_top
        self.min_examples = min_examples
        self.capacity = capacity
        self.max_ids = max_ids
        self.w = np.zeros(1 << bits)
        self._g2 = np.full(1 << bits, 1e-2)
        self.wn = np.zeros(N_NUMERIC)
        self._gn2 = np.full(N_NUMERIC, 1e-2)
        arms = 1 << arm_bits
        self._arm_mask = arms - 1
        # judged pages and relevant ones, per slot: block on its page, (host, signature), host
        self.stats_n = np.zeros((3, arms), dtype=np.float32)
        self.stats_rel = np.zeros((3, arms), dtype=np.float32)
        self._flat_n = self.stats_n.reshape(-1)  # views
        self._flat_rel = self.stats_rel.reshape(-1)
        self._arms = arms
        self.judged = [0, 0]  # irrelevant, relevant
        # the candidate table: one row per queued link (its first in-link's features)
        self.ids = np.zeros((capacity, max_ids), dtype=np.int32)
        self.static = np.zeros((capacity, len(_STATIC)), dtype=np.float32)
        self.slots = np.zeros((capacity, 3), dtype=np.int32)
        self.inlinks = np.zeros((capacity, 2), dtype=np.float32)  # irrelevant, relevant pages
        self.last = np.full(capacity, -np.inf, dtype=np.float32)  # last score given
        self.live = np.zeros(capacity, dtype=bool)
        self._row: dict[str, int] = {}
        self._url: list[str | None] = [None] * capacity
        self._child: list[Any] = [None] * capacity  # the request state to send again
        self._free = list(range(capacity - 1, -1, -1))
        self._since = 0
        # the lowest score of the last re-score's sent links: a queued link found again
        # scoring below it would not be popped before the next re-score (the ``rescore_top``
        # above it outnumber an epoch's pops), so it need not be sent again
        self.cut = -np.inf
        self.dropped = 0  # rows dropped from a full table
        # the last ``replay`` examples (features as they were when credited), refitted on at
        # every re-score: one AdaGrad step per page learns too little from ~1,000 pages
        self.hashed = hashed
        self.passes = passes
        self.l2 = l2
        self._rids = np.zeros((replay, max_ids), dtype=np.int32)
        self._rx = np.zeros((replay, N_NUMERIC))
        self._ry = np.zeros(replay)
        self._arange = np.arange(max(replay, 1), dtype=np.intp)  # the rows of a batch
        self._rn = 0  # examples stored so far (the buffer is a ring)
        # judged URLs (label, in-links from irrelevant and relevant pages), the oldest
        # forgotten past ``capacity``: links found later to them are examples too
        self._known: dict[str, tuple[float, float, float]] = {}
        self._slot_cache: dict[tuple[str | int, ...], int] = {}
        # per minibatch of the replay buffer (its first index): its distinct feature ids and
        # their inverse, reused by every refit until an example is stored into that batch
        self.batch = 256
        self._uniq: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    # -- bookkeeping -------------------------------------------------------------------------
    def slot(self, *parts: str | int) -> int:
        return zlib.crc32("\x1f".join(map(str, parts)).encode()) & self._arm_mask

    def cached_slot(self, *parts: str | int) -> int:
        """:meth:`slot`, memoised (hosts and (host, signature) arms recur on every page)."""
        got = self._slot_cache.get(parts)
        if got is None:
            if len(self._slot_cache) >= 100_000:
                self._slot_cache.clear()
            got = self._slot_cache[parts] = self.slot(*parts)
        return got

    @property
    def prior(self) -> float:
        n0, n1 = self.judged
        return (n1 + 1.0) / (n0 + n1 + 2.0)

    @property
    def ready(self) -> bool:
        return min(self.judged) >= self.min_examples

    def nbytes(self) -> int:
        """The judge's arrays in bytes (the fixed part of its memory; the URL map adds about
        150 bytes per live row, at most ``capacity`` rows)."""
        arrays = (self.w, self._g2, self.wn, self._gn2, self.stats_n, self.stats_rel)
        arrays += (self.ids, self.static, self.slots, self.inlinks, self.last, self.live)
        arrays += (self._rids, self._rx, self._ry)
        return sum(a.nbytes for a in arrays)

    def __len__(self) -> int:
        return len(self._row)

    # -- links -------------------------------------------------------------------------------
    def add(
        self,
        url: str,
        ids: list[int],
        static: tuple[float, ...],
        slots: tuple[int, int, int],
        child: Any,
        parent_relevant: bool,
    ) -> int:
        """A link to ``url`` found on a page (once per page): a new row with its features, or
        an in-link vote for a row already queued (kept with the better Shark-Search score).
        Returns the row."""
        row = self._row.get(url)
        if row is None:
            if not self._free:
                self._drop()
            row = self._free.pop()
            self._row[url] = row
            self._url[row] = url
            n = min(len(ids), self.max_ids) if self.hashed else 0
            r = self.ids[row]
            r[:n] = ids[:n]
            r[n:] = 0
            self.static[row] = static
            self.slots[row] = slots
            self.inlinks[row] = 0.0
            self.live[row] = True
            self._child[row] = child
        else:
            self.update(row, static[_SHARK], child)
        self.inlinks[row, int(parent_relevant)] += 1.0
        return row

    def row_of(self, url: str) -> int | None:
        """The row of a queued URL, or None."""
        return self._row.get(url)

    def vote(self, row: int, shark: float, child: Any, parent_relevant: bool) -> None:
        """A queued row found on another page: :meth:`add` without the features (a row keeps
        its first in-link's), for a caller that need not compute them."""
        self.update(row, shark, child)
        self.inlinks[row, int(parent_relevant)] += 1.0

    def update(self, row: int, shark: float, child: Any) -> None:
        """A better-scored link to a queued row on the same page: its score and state."""
        if shark > self.static[row, _SHARK]:
            self.static[row, _SHARK] = shark
            self._child[row] = child

    def child_of(self, row: int) -> Any:
        """A copy of the request state kept for ``row`` (its best in-link's)."""
        child = self._child[row]
        fast = getattr(child, "copy", None)
        return fast() if fast is not None else copy.copy(child)

    def _drop(self) -> None:
        """Free the lowest-scored quarter of a full table."""
        k = max(1, self.capacity // 4)
        rows = np.argpartition(self.last, k - 1)[:k]
        for row in rows.tolist():
            self._forget(row)
        self.dropped += k

    def _forget(self, row: int) -> None:
        url = self._url[row]
        if url is not None:
            del self._row[url]
        self._url[row] = None
        self._child[row] = None
        self.live[row] = False
        self.last[row] = -np.inf
        self._free.append(row)

    # -- the model ---------------------------------------------------------------------------
    def _numeric(self, rows: np.ndarray) -> np.ndarray:
        return self._numbers(self.static[rows], self.inlinks[rows], self.slots[rows])

    def _numbers(self, static: np.ndarray, inlinks: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """The numeric features of rows (their static columns, in-link counts and slots)."""
        x = np.empty((len(static), N_NUMERIC))
        # the in-links' log1p by NumPy, as ever (its float32 log1p is its own, and not the
        # same for every layout of its input); the rest by the kernel
        x[:, _INLINKS] = np.log1p(inlinks[:, ::-1])
        self._k.numbers(
            static, slots, self._flat_n, self._flat_rel, self._arms, self.prior, self.smoothing, x
        )
        return x

    def prob(self, rows: np.ndarray) -> np.ndarray:
        return self._prob(rows, self.static[rows], self.slots[rows])

    def _prob(self, rows: np.ndarray, static: np.ndarray, slots: np.ndarray) -> np.ndarray:
        x = self._numbers(static, self.inlinks[rows], slots)
        z = np.empty(len(rows))
        self._k.row_sums(self.w, self.ids, rows, z)  # the hashed features' sums
        z += x @ self.wn
        return _sigmoid(z)

    def bonus(self, rows: np.ndarray) -> np.ndarray:
        """The UCB exploration bonus of each row's (host, block signature) arm."""
        return self._bonus(self.slots[rows, 1])

    def _bonus(self, arms: np.ndarray) -> np.ndarray:
        n_all = self.judged[0] + self.judged[1]
        n = self.stats_n[1, arms]
        return self.explore * np.sqrt(math.log1p(n_all) / (1.0 + n))

    @property
    def effective_weight(self) -> float:
        """``weight`` × n / (n + ``confidence``), n the pages judged so far: the first epochs'
        models (a word's weight learnt from one or two pages) move the order less."""
        weight = self.weight * self.factor
        if self.confidence <= 0:
            return weight
        n = self.judged[0] + self.judged[1]
        return weight * n / (n + self.confidence)

    def score(self, rows: np.ndarray) -> np.ndarray:
        """The score within an epoch: Shark-Search score + weight × P(relevant) + bonus."""
        static, slots = self.static[rows], self.slots[rows]  # gathered once
        s = static[:, _SHARK].astype(float)
        if self.explore:
            s += self._bonus(slots[:, 1])
        if self.ready:
            s += self.effective_weight * self._prob(rows, static, slots)
        s = _clip(s, 0.0, EPOCH_STEP - 1.0)
        self.last[rows] = s
        return s

    def learn(self, url: str, relevant: bool, host_slot: int, own: bool = True) -> None:
        """A judged page: one AdaGrad step on the features of the link that led to it, then
        its outcome counted for its block, arm and host; its row leaves the table. ``own``:
        judged by this process (another worker's page counts the same, but does not bring
        this process's next re-scoring nearer: each worker re-scores after its own pages)."""
        y = 1.0 if relevant else 0.0
        row = self._row.get(url)
        if row is not None:
            one = slice(row, row + 1)
            x = self._numbers(self.static[one], self.inlinks[one], self.slots[one])[0]
            if self.gate and self.ready:
                z = float(_sum(self.w[self.ids[row]]) + x @ self.wn)
                k = self._pqn % len(self._pq)
                self._pq[k] = (
                    self.static[row, _SHARK],
                    1.0 / (1.0 + math.exp(-min(30.0, max(-30.0, z)))),
                    y,
                )
                self._pqn += 1
            self._store(self.ids[row], x, y)
            self._step_one(self.ids[row : row + 1], x[None, :], y)
            self._known[url] = (y, float(self.inlinks[row, 0]), float(self.inlinks[row, 1]))
            slots = self.slots[row]
            self.stats_n[0, slots[0]] += 1
            self.stats_n[1, slots[1]] += 1
            self.stats_rel[0, slots[0]] += y
            self.stats_rel[1, slots[1]] += y
            self._forget(row)
        else:
            self._known[url] = (y, 0.0, 0.0)
        if len(self._known) > self.capacity:
            self._known.pop(next(iter(self._known)))
        self.stats_n[2, host_slot] += 1
        self.stats_rel[2, host_slot] += y
        self.judged[int(relevant)] += 1
        self._since += own

    def _store(self, ids: np.ndarray, x: np.ndarray, y: float) -> None:
        k = self._rn % len(self._ry)
        self._uniq.pop(k - k % self.batch, None)
        self._rids[k] = ids
        self._rx[k] = x
        self._ry[k] = y
        self._rn += 1

    def _store_many(self, ids: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
        """:meth:`_store` of each row in turn, in three array assignments (``len(y)`` is at
        most the ring's size, so the positions are distinct)."""
        size = len(self._ry)
        if len(y) > size:  # (not from known_links: a page credits a few dozen links at most)
            for row in range(len(y)):
                self._store(ids[row], x[row], float(y[row]))
            return
        m, first = len(y), self._rn % size
        k: slice | np.ndarray = slice(first, first + m)
        if first + m > size:  # round the ring's end
            k = (self._rn + np.arange(m)) % size
            for start in dict.fromkeys((k - k % self.batch).tolist()):
                self._uniq.pop(start, None)
        else:
            for start in range(first - first % self.batch, first + m, self.batch):
                self._uniq.pop(start, None)
        self._rids[k] = ids
        self._rx[k] = x
        self._ry[k] = y
        self._rn += m

    def label_of(self, url: str) -> float | None:
        """The judged label of a fetched URL still remembered (1.0, 0.0), else None."""
        known = self._known.get(url)
        return None if known is None else known[0]

    def known_link(
        self,
        url: str,
        ids: list[int],
        static: tuple[float, ...],
        slots: tuple[int, int, int],
        parent_relevant: bool,
    ) -> None:
        """Another page's link to a page already judged: one more example of what such a
        link's features say (credited to every known in-link, not only the first), learned at
        the next refit; and one more in-link vote for the page."""
        self.known_links([(url, ids, static, slots, parent_relevant)])

    def known_links(
        self,
        links: list[tuple[str, list[int], tuple[float, ...], tuple[int, int, int], bool]],
    ) -> None:
        """:meth:`known_link` for a page's links at once (one vectorised featurisation; the
        links' URLs are distinct), stored in the given order."""
        # each example's columns in flat lists (one array each, no nested sequences)
        statics: list[float] = []
        counts: list[float] = []
        slots_: list[int] = []
        flat: list[int] = []  # each row its first ``width`` ids, padded with 0 to ``max_ids``
        ys: list[float] = []
        width = self.max_ids if self.hashed else 0
        padding = [0] * self.max_ids
        memo = self._known
        for url, ids, static, slots, parent_relevant in links:
            known = memo.get(url)
            if known is None:
                continue
            y, irr, rel = known
            memo[url] = (y, irr + (not parent_relevant), rel + parent_relevant)
            statics += static
            counts += (irr, rel)
            slots_ += slots
            ids = ids[:width]
            flat += ids
            flat += padding[len(ids) :]
            ys.append(y)
        m = len(ys)
        if not m:
            return
        x = self._numbers(
            np.array(statics, dtype=np.float32).reshape(m, len(_STATIC)),
            np.array(counts, dtype=np.float32).reshape(m, 2),
            np.array(slots_, dtype=np.int32).reshape(m, 3),
        )
        self._store_many(
            np.array(flat, dtype=np.int32).reshape(m, self.max_ids), x, np.array(ys, dtype=float)
        )

    def _step(
        self,
        ids: np.ndarray,
        x: np.ndarray,
        y: np.ndarray,
        uniq: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """One AdaGrad step of the logistic loss (with L2) on a batch of examples (``uniq``:
        the batch's distinct ids and inverse, when known)."""
        used, inverse = uniq if uniq is not None else self._unique(ids)
        z = np.empty(len(ids))
        self._k.row_sums(self.w, ids, self._arange[: len(ids)], z)
        z += x @ self.wn
        g = _sigmoid(z)
        g -= y
        # the distinct ids' gradients, square sums and weights (the padding id 0 learns nothing)
        self._k.adagrad_update(self.w, self._g2, used, inverse, g, ids.shape[1], self.l2, self.rate)
        self._k.numeric_update(self.wn, self._gn2, g @ x, self.l2, self.rate)

    def _step_one(self, ids: np.ndarray, x: np.ndarray, y: float) -> None:
        """:meth:`_step` on one example (``ids`` and ``x`` one row each): the same values, its
        distinct ids found by the kernel."""
        z = np.empty(1)
        self._k.row_sums(self.w, ids, self._arange[:1], z)
        z += x @ self.wn
        g = _sigmoid(z)
        g -= y
        self._k.adagrad_row(self.w, self._g2, ids[0], float(g[0]), self.l2, self.rate)
        self._k.numeric_update(self.wn, self._gn2, g @ x, self.l2, self.rate)

    @staticmethod
    def _unique(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``np.unique(ids, return_inverse=True)`` (the inverse flat), in four array calls:
        the distinct ids sorted (as ``np.intp``, the type an index is taken in) and where each
        id is among them."""
        flat = ids.ravel()
        order = flat.copy()
        order.sort()
        keep = np.empty(len(order), dtype=bool)
        keep[:1] = True
        np.not_equal(order[1:], order[:-1], out=keep[1:])
        used = order[keep].astype(np.intp)
        return used, used.searchsorted(flat)

    def refit(self, batch: int | None = None) -> None:
        """``passes`` passes of minibatch steps over the stored examples (in buffer order)."""
        n = min(self._rn, len(self._ry))
        size = batch or self.batch
        for _ in range(self.passes):
            for lo in range(0, n, size):
                sl = slice(lo, min(n, lo + size))
                uniq = None
                if size == self.batch:
                    uniq = self._uniq.get(lo)
                    if uniq is None or len(uniq[1]) != (sl.stop - lo) * self.max_ids:
                        uniq = self._uniq[lo] = self._unique(self._rids[sl])
                self._step(self._rids[sl], self._rx[sl], self._ry[sl], uniq)

    def gate_factor(self) -> float:
        """The factor of :data:`GATE_FACTORS` under which the window's credited links rank
        best (AUC of their outcomes; 1.0 until the window holds ``GATE_MIN`` of each)."""
        n = min(self._pqn, len(self._pq))
        pq = self._pq[:n]
        y = pq[:, 2]
        pos = int(y.sum())
        if pos < GATE_MIN or n - pos < GATE_MIN:
            return 1.0
        best, best_auc = 1.0, -1.0
        for f in GATE_FACTORS:
            got = auc(pq[:, 0] + self.weight * f * pq[:, 1], y)
            if got > best_auc + 1e-9 or (abs(got - best_auc) <= 1e-9 and f == 1.0):
                best, best_auc = f, got
        return best

    @property
    def due(self) -> bool:
        return self._since >= self.rescore_every and self.ready

    def rescore(self) -> Iterator[tuple[str, float, Any]]:
        """Every live row scored by the current model; the ``rescore_top`` best, best first."""
        self._since = 0
        self.refit()
        if self.gate:
            self.factor = self.gate_factor()
        rows = np.flatnonzero(self.live)
        if not len(rows):
            return
        scores = self.score(rows)
        k = min(self.rescore_top, len(rows))
        top = (-scores).argpartition(k - 1)[:k]
        top = top[(-scores[top]).argsort(kind="stable")]
        self.cut = float(scores[top[-1]]) if k == self.rescore_top else -np.inf
        for i in top.tolist():
            row = int(rows[i])
            url = self._url[row]
            if url is not None:
                yield url, float(scores[i]), self.child_of(row)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-clip(z, -30, 30)))``, in place of the temporaries (the same values)."""
    t = _clip(z, -30.0, 30.0)
    np.negative(t, out=t)
    np.exp(t, out=t)
    t += 1.0
    return np.divide(1.0, t, out=t)


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    """The area under the ROC curve of ``scores`` for the 0/1 outcomes ``y`` (Mann-Whitney, ties
    counted half: tied scores get their average rank)."""
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = (ends - (counts - 1) / 2.0)[inverse]  # 1-based average ranks
    pos = y > 0.5
    n1 = int(pos.sum())
    n0 = len(y) - n1
    if not n1 or not n0:
        return 0.5
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))
