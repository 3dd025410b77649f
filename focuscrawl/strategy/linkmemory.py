"""The best score each URL has been sent to the frontier with, so that a link found again is
only sent when it improves its score (a priority upgrade). Most links on a page were seen before:
skipping them here saves building a request, fingerprinting it and a frontier round trip.

Bounded: past ``max_urls`` entries it forgets everything and the frontier's own
de-duplication takes over, which is exact.
"""

from __future__ import annotations

_INF = float("inf")  # the best score of a fetched URL


class LinkMemory:
    def __init__(self, max_urls: int = 2_000_000) -> None:
        self.max_urls = max_urls
        self._best: dict[int, float] = {}

    def improves(self, url: str, score: float) -> bool:
        """True (and remembered) when ``url`` is new or ``score`` beats its best so far."""
        key = hash(url)
        best = self._best.get(key)
        if best is not None and best >= score:
            return False
        if best is None and len(self._best) >= self.max_urls:
            self._best.clear()
        self._best[key] = score
        return True

    def sent(self, url: str) -> bool:
        """``url`` was sent before (queued, or fetched) and not forgotten."""
        return hash(url) in self._best

    def fetched(self, url: str) -> None:
        """``url`` was fetched: no later score improves on it."""
        self._best[hash(url)] = _INF

    def is_fetched(self, url: str) -> bool:
        return self._best.get(hash(url)) == _INF

    def __len__(self) -> int:
        return len(self._best)
