"""When a host may get its next request under ``DOWNLOAD_DELAY`` (no Scrapy import).

Scrapy's downloader slot holds a request until the host's delay has passed since its last
request, drawing the delay at random (``DOWNLOAD_DELAY`` × (1 ± jitter)) each time it looks, so
a request handed out early waits in the slot and holds one of the engine's
``CONCURRENT_REQUESTS`` meanwhile. The scheduler hands out the best entry of a host that is
*ready* instead; a rule says when:

- ``drawn`` (the default): the host's next delay is drawn once, from Scrapy's own distribution
  (uniform in ``delay × (1 ± jitter)``), and the request carries that draw to its slot, which
  then waits exactly it (the slot's delay set to the draw, no jitter of its own). The host is
  ready when the draw has passed: the request never waits in the slot, and the intervals
  between a host's requests are Scrapy's documented ones. The slot still enforces them, so a
  request that arrives early (or a robots.txt request between two pages) waits, never goes
  sooner;
- ``mean``: ``delay`` after its last request (the slot draws again while a request waits);
- ``longest``: ``delay × (1 + jitter)`` after it (no request ever waits, but the host is
  fetched at most once every 1.5 delays with Scrapy's default jitter).

Memory is bounded: draws and hand-out times are kept for at most ``max_hosts`` hosts; past it,
hosts out of every delay (``forget_after`` seconds since their last hand-out) are forgotten —
a forgotten host is ready, as it would be anyway.
"""

from __future__ import annotations

import random

RULES = ("drawn", "mean", "longest")


class HostDelays:
    def __init__(
        self,
        delay: float,
        jitter: float,
        rule: str = "drawn",
        max_hosts: int = 4096,
        forget_after: float = 60.0,
        rng: random.Random | None = None,
    ) -> None:
        if rule not in RULES:
            raise ValueError(f"delay rule {rule!r}: one of {', '.join(RULES)}")
        self.delay = max(0.0, delay)
        self.jitter = max(0.0, jitter)
        self.rule = rule
        self.max_hosts = max_hosts
        self.forget_after = max(forget_after, self.delay * (1 + self.jitter))
        self._rng = rng or random.Random()  # noqa: S311 - a politeness jitter, not a secret
        self._handed: dict[str, float] = {}  # host -> when its last request was handed out
        self._next: dict[str, float] = {}  # host -> its next request's delay (rule "drawn")

    @property
    def draws(self) -> bool:
        """Requests carry their drawn delay to the slot (rule ``drawn``, a delay set)."""
        return self.rule == "drawn" and self.delay > 0

    def draw(self, delay: float | None = None, jitter: float | None = None) -> float:
        """One delay from Scrapy's distribution: ``delay × (1 + uniform(-jitter, jitter))``,
        floored at 0 (as ``Slot.download_delay``)."""
        d = self.delay if delay is None else delay
        j = self.jitter if jitter is None else jitter
        if not j:
            return d
        return max(0.0, d * (1 + self._rng.uniform(-j, j)))

    def wait_of(self, host: str, delay: float | None = None, jitter: float | None = None) -> float:
        """The delay the host's next request must wait after its last one, by the rule
        (``delay`` / ``jitter``: the host's slot's own, when it has one)."""
        d = self.delay if delay is None else delay
        j = self.jitter if jitter is None else jitter
        if self.rule == "longest":
            return d * (1 + j)
        if self.rule == "mean" or d <= 0:
            return d
        wait = self._next.get(host)
        if wait is None:
            wait = self._next[host] = self.draw(d, j)
        return wait

    def ready_at(
        self,
        host: str,
        last_sent: float,
        delay: float | None = None,
        jitter: float | None = None,
    ) -> float:
        """When the host may get its next request: its wait after the later of its last
        hand-out and ``last_sent`` (its slot's last request, robots.txt included)."""
        handed = self._handed.get(host)
        if handed is None and not last_sent:  # never fetched (a slot's lastseen starts at 0)
            return 0.0
        last = last_sent if handed is None else max(handed, last_sent)
        return last + self.wait_of(host, delay, jitter)

    def handed(self, host: str, now: float) -> float | None:
        """A request of ``host`` is handed out at ``now``: the delay it must carry to its slot
        (rule ``drawn``; None for the other rules, whose slots keep Scrapy's own draw)."""
        wait = self._next.pop(host, None) if self.draws else None
        self._handed[host] = now
        if len(self._handed) > self.max_hosts:
            self._forget(now)
        return wait

    def _forget(self, now: float) -> None:
        self._handed = {h: t for h, t in self._handed.items() if now - t < self.forget_after}
        self._next = {h: w for h, w in self._next.items() if h in self._handed}

    def __len__(self) -> int:
        return len(self._handed)
