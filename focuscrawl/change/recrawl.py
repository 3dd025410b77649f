"""What the spider's recrawl mode (``-a mode=recrawl``) asks the change store: the due list.

    from focuscrawl.change.recrawl import due_urls
    urls = due_urls(crawler.settings)          # best first, at most FOCUSCRAWL_RECRAWL_BUDGET

A revisited page follows only what is new on it (:class:`NewLinks`): when its content changed
significantly, the content links it did not have in the stored version (the new items of a hub
page) are scored and queued as in a crawl; an unchanged or insignificantly changed page queues
none of its links again. Pages found while recrawling (the new items themselves) follow their
links as in a crawl; the change pipeline then tells new pages (``new``) from revisited ones.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from focuscrawl.change.classify import classify
from focuscrawl.change.fingerprint import DEFAULT_THRESHOLDS, Fingerprints, Thresholds
from focuscrawl.change.store import ChangeStore, open_store


def _get(settings: Mapping[str, Any], name: str, default: Any) -> Any:
    value = settings.get(name)
    return default if value in (None, "") else value


def due_urls(settings: Mapping[str, Any], now: float | None = None) -> list[str]:
    """The stored URLs to revisit now, ordered by ``FOCUSCRAWL_RECRAWL_POLICY``."""
    store = open_store(settings)
    store.open()
    try:
        return store.due(
            time.time() if now is None else now,
            int(_get(settings, "FOCUSCRAWL_RECRAWL_BUDGET", 0)),
            str(_get(settings, "FOCUSCRAWL_RECRAWL_POLICY", "cluster")),
            period=float(_get(settings, "FOCUSCRAWL_RECRAWL_PERIOD", 86400.0)),
            sample=float(_get(settings, "FOCUSCRAWL_RECRAWL_SAMPLE", 0.2)),
            threshold=float(_get(settings, "FOCUSCRAWL_RECRAWL_CLUSTER_THRESHOLD", 0.3)),
        )
    finally:
        store.close()


def signal_plan(settings: Mapping[str, Any], now: float | None = None) -> Any:
    """The recrawl's due list with the change signals (``FOCUSCRAWL_SIGNALS``): a
    :class:`~focuscrawl.change.signals.SignalPlan` from the stored lastmods and per-host trust
    (:mod:`focuscrawl.change.signal_store`) over the base ``FOCUSCRAWL_RECRAWL_POLICY``."""
    from focuscrawl.change.signal_store import open_signal_store
    from focuscrawl.change.signals import TrustRules, plan_with_signals

    store = open_store(settings)
    store.open()
    signals = open_signal_store(store)
    signals.open()
    try:
        rules = TrustRules(
            min_checks=int(_get(settings, "FOCUSCRAWL_SIGNALS_MIN_CHECKS", 6)),
            max_error=float(_get(settings, "FOCUSCRAWL_SIGNALS_MAX_ERROR", 0.2)),
        )
        return plan_with_signals(
            store.records(),
            time.time() if now is None else now,
            int(_get(settings, "FOCUSCRAWL_RECRAWL_BUDGET", 0)),
            str(_get(settings, "FOCUSCRAWL_RECRAWL_POLICY", "cluster")),
            signals.lastmods(),
            signals.trust(),
            rules,
            period=float(_get(settings, "FOCUSCRAWL_RECRAWL_PERIOD", 86400.0)),
            sample=float(_get(settings, "FOCUSCRAWL_RECRAWL_SAMPLE", 0.2)),
            threshold=float(_get(settings, "FOCUSCRAWL_RECRAWL_CLUSTER_THRESHOLD", 0.3)),
        )
    finally:
        signals.close()
        store.close()


def new_links(
    old: Fingerprints | None,
    new: Fingerprints,
    url: str = "",
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> tuple[str, frozenset[str] | None]:
    """The change status of ``new`` against the stored ``old`` version, and the URLs of the
    content links to follow: ``None`` (every link) for a page with no stored version, the
    content links that ``old`` did not have for a significant change, none otherwise.

    Without the stored version's content (a record of an older release, or an unreadable one)
    every content link of ``new`` counts as new. A stored version keeps at most
    ``MAX_STORED_ITEMS`` items: links past that many count as new too (the frontier then
    revisits them with a conditional GET)."""
    change = classify(old, new, url, thresholds)
    if change.status == "new":
        return change.status, None
    if change.status != "significant":
        return change.status, frozenset()
    now = new.content
    if now is None:
        return change.status, frozenset(u for _, u in change.items_added)
    before = old.content if old is not None else None
    known = {u for _, u in before.items} if before is not None else set()
    return change.status, frozenset(u for _, u in now.items if u not in known)


class NewLinks:
    """The recrawl's question to the change store, asked as a revisited page is parsed: which
    of its links to follow (:func:`new_links` against its stored version). Asked before the
    change pipeline records the new version. ``open``/``close`` the store around a crawl."""

    def __init__(self, store: ChangeStore, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> None:
        self.store = store
        self.thresholds = thresholds

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], thresholds: Thresholds) -> NewLinks:
        return cls(open_store(settings), thresholds)

    def open(self) -> None:
        self.store.open()

    def close(self) -> None:
        self.store.close()

    def previous_fetch(self, url: str) -> float:
        """When ``url`` was last fetched before this visit (0 when never)."""
        record = self.store.get(url)
        return record.last_fetched if record is not None else 0.0

    def of(self, url: str, new: Fingerprints) -> tuple[str, frozenset[str] | None]:
        """:func:`new_links` of ``url``'s new version against the stored one (raises
        :class:`~focuscrawl.change.store.StoreError` when the store cannot answer)."""
        record = self.store.get(url)
        old = record.fingerprints if record is not None and not record.deleted else None
        return new_links(old, new, url, self.thresholds)
