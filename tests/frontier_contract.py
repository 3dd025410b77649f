"""The contract every frontier backend passes. Subclass and provide a ``frontier`` fixture
(an opened, empty frontier) and, for persistent backends, ``reopen(frontier)``."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from focuscrawl.frontier.base import Frontier, PushResult


def fp(url: str) -> bytes:
    return hashlib.sha1(url.encode()).digest()


def push(frontier: Frontier, url: str, score: float, **data: Any) -> PushResult:
    return frontier.push(url, score, fp(url), dict(data))


def drain(frontier: Frontier, busy: Any = None) -> list[str]:
    out = []
    while True:
        entry = frontier.pop(busy) if busy else frontier.pop()
        if entry is None:
            return out
        out.append(entry.url)
        frontier.ack(entry.fingerprint)


class FrontierContract:
    def test_pops_highest_score_first(self, frontier: Frontier) -> None:
        rng = random.Random(7)
        scores = {f"http://h{i % 5}.test/p{i}": rng.random() for i in range(300)}
        for url, score in scores.items():
            assert push(frontier, url, score) is PushResult.ADDED
        assert len(frontier) == 300
        popped = drain(frontier)
        assert popped == sorted(scores, key=lambda u: -scores[u])
        assert len(frontier) == 0

    def test_ties_pop_in_insertion_order(self, frontier: Frontier) -> None:
        urls = [f"http://h{i % 3}.test/{i}" for i in range(30)]
        for url in urls:
            push(frontier, url, -1.0)
        assert drain(frontier) == urls

    def test_entry_round_trips_data_and_fingerprint(self, frontier: Frontier) -> None:
        data = {"depth": 3, "parent": "http://a.test/", "inherited": 0.25, "tags": ["x"]}
        frontier.push("http://a.test/x?q=1", 0.5, fp("http://a.test/x?q=1"), data)
        entry = frontier.pop()
        assert entry is not None
        assert (entry.url, entry.score, entry.data) == ("http://a.test/x?q=1", 0.5, data)
        assert entry.fingerprint == fp("http://a.test/x?q=1")

    def test_duplicates_are_rejected_and_better_scores_upgrade(self, frontier: Frontier) -> None:
        push(frontier, "http://a.test/1", 0.2)
        push(frontier, "http://a.test/2", 0.5)
        assert push(frontier, "http://a.test/1", 0.1) is PushResult.QUEUED
        assert push(frontier, "http://a.test/1", 0.9) is PushResult.UPGRADED
        assert len(frontier) == 2
        first = frontier.pop()
        assert first is not None and (first.url, first.score) == ("http://a.test/1", 0.9)
        frontier.ack(first.fingerprint)
        assert drain(frontier) == ["http://a.test/2"]
        assert frontier.pop() is None

    def test_popped_urls_are_seen_and_not_queued_again(self, frontier: Frontier) -> None:
        push(frontier, "http://a.test/1", 0.2)
        assert drain(frontier) == ["http://a.test/1"]
        assert frontier.seen(fp("http://a.test/1"))
        assert push(frontier, "http://a.test/1", 0.9) is PushResult.SEEN
        assert len(frontier) == 0
        assert frontier.push("http://a.test/1", 0.9, fp("http://a.test/1"), {}, force=True) in (
            PushResult.ADDED,
        )
        assert drain(frontier) == ["http://a.test/1"]

    def test_busy_hosts_are_skipped_not_lost(self, frontier: Frontier) -> None:
        for i in range(50):
            push(frontier, f"http://big.test/{i}", 0.9 - i / 1000)
        push(frontier, "http://small.test/1", 0.1)
        push(frontier, "http://other.test/1", 0.05)
        popped = drain(frontier, busy=lambda host: host == "big.test")
        assert popped == ["http://small.test/1", "http://other.test/1"]
        assert len(frontier) == 50
        assert drain(frontier)[:2] == ["http://big.test/0", "http://big.test/1"]

    def test_pop_on_all_busy_returns_none_and_keeps_entries(self, frontier: Frontier) -> None:
        push(frontier, "http://a.test/1", 0.5)
        assert frontier.pop(lambda host: True) is None
        assert len(frontier) == 1
        assert drain(frontier) == ["http://a.test/1"]

    def test_upgrade_moves_url_ahead_of_other_hosts(self, frontier: Frontier) -> None:
        for i in range(10):
            push(frontier, f"http://a.test/{i}", 0.5)
        push(frontier, "http://b.test/late", 0.1)
        push(frontier, "http://b.test/late", 0.99)
        assert drain(frontier)[0] == "http://b.test/late"
