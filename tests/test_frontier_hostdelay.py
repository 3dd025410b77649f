"""``HostDelays``: when a host may get its next request under ``DOWNLOAD_DELAY``."""

from __future__ import annotations

import random

import pytest

from focuscrawl.frontier.hostdelay import HostDelays


def test_drawn_waits_are_scrapys_distribution_and_the_request_carries_the_one_waited() -> None:
    delays = HostDelays(1.0, 0.5, "drawn", rng=random.Random(7))
    assert delays.ready_at("a", 0.0) == 0.0  # never fetched: ready now, nothing drawn
    assert delays.handed("a", 100.0) is None  # its slot has no last request to wait after
    waits = []
    now = 100.0
    for _ in range(400):
        ready = delays.ready_at("a", last_sent=now)
        assert delays.ready_at("a", last_sent=now) == ready  # drawn once, not at each look
        carried = delays.handed("a", ready)
        assert carried == pytest.approx(ready - now)  # the slot waits what readiness assumed
        waits.append(carried)
        now = ready
    assert 0.5 <= min(waits) < 0.55 and 1.45 < max(waits) <= 1.5
    assert sum(waits) / len(waits) == pytest.approx(1.0, abs=0.05)


def test_the_later_of_hand_out_and_last_send_counts() -> None:
    delays = HostDelays(2.0, 0.0, "drawn")
    delays.handed("a", 10.0)
    assert delays.ready_at("a", last_sent=0.0) == 12.0  # the hand-out, not yet in the slot
    assert delays.ready_at("a", last_sent=11.0) == 13.0  # robots.txt went at 11
    assert delays.ready_at("a", last_sent=11.0, delay=5.0) == 13.0  # drawn already: kept
    assert delays.ready_at("b", last_sent=11.0, delay=5.0) == 16.0  # a slot's own delay


@pytest.mark.parametrize(("rule", "wait"), [("mean", 2.0), ("longest", 3.0)])
def test_mean_and_longest_leave_the_draw_to_the_slot(rule: str, wait: float) -> None:
    delays = HostDelays(2.0, 0.5, rule)
    assert not delays.draws
    delays.handed("a", 10.0)
    assert delays.ready_at("a", last_sent=10.0) == 10.0 + wait
    assert delays.handed("a", 20.0) is None


def test_no_delay_no_draw() -> None:
    delays = HostDelays(0.0, 0.5, "drawn")
    assert not delays.draws
    delays.handed("a", 10.0)
    assert delays.ready_at("a", last_sent=10.0) == 10.0
    assert delays.handed("a", 10.0) is None


def test_memory_is_bounded_and_forgotten_hosts_are_ready() -> None:
    delays = HostDelays(1.0, 0.5, "drawn", max_hosts=100, forget_after=60.0)
    for i in range(10_000):
        delays.ready_at(f"h{i}", last_sent=float(i))
        delays.handed(f"h{i}", float(i))
    assert len(delays) <= 101 and len(delays._next) <= 101
    assert delays.ready_at("h0", last_sent=0.0) == 0.0  # forgotten: ready


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="one of drawn, mean, longest"):
        HostDelays(1.0, 0.5, "soonest")
