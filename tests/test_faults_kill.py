"""SIGKILL at random points of a crawl loses nothing: no page, no link, no index update.

A crawl of a whole synthetic test web with a JOBDIR (and the change store and index in its data
dir) is killed ``FOCUSCRAWL_TEST_KILLS`` times (3 by default; ``bench/bench_faults.py`` runs 20)
at random page counts, and resumed until it ends by itself. Then:

* it fetched every page an uninterrupted crawl of the same web fetches (breadth-first, so the set
  does not depend on the order; the calendar trap's capped variants are left out), and no page
  is quarantined: a kill from outside blames at most the one page being worked on at that
  moment (the work mark, :mod:`focuscrawl.frontier.workmark`), never the bystanders in flight;
* only pages in flight at a kill were fetched twice (at most the concurrency per kill);
* the index holds exactly the pages the crawl judged relevant at their last fetch, and the
  change store has a record of every page fetched (both pass ``PRAGMA integrity_check``), but
  for quarantined pages: one judged relevant and killed before its index update is fetched
  again, unless that second time is cut by a kill too.
"""

from __future__ import annotations

import os
import random
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.frontier.quarantine import QUARANTINE_FILE, read_records, read_redis_quarantine
from tests.fault_crawl import (
    BFS,
    CONCURRENCY,
    CrawlFacts,
    CrawlProcess,
    comparable,
    crawl_args,
    crawl_facts,
    topic_file,
)

KILLS = int(os.environ.get("FOCUSCRAWL_TEST_KILLS", "3"))


def killed_crawl(
    web: Any, work: Path, kills: int, seed: int, total: int, extra: Sequence[str] = ()
) -> tuple[CrawlFacts, int]:
    """Kill a JOBDIR crawl ``kills`` times at random page counts; resume until it ends."""
    rng = random.Random(seed)
    topic = topic_file(work, web)
    job = ["-s", f"JOBDIR={work / 'job'}", *BFS, *extra]
    run = 0
    done = 0
    while True:
        run += 1
        crawl = CrawlProcess(work, "topical", crawl_args(web, topic, work, run, *job))
        if run <= kills:
            # a random point of this run: after 10 to (what is left / kills left) pages
            left = max(20, (total - done) // (kills - run + 2))
            at = rng.randint(10, left)
            assert crawl.wait_for_pages(at), crawl.log[-3000:]
            crawl.kill(signal.SIGKILL)
            assert crawl.finish() == -signal.SIGKILL
            done += at
            continue
        assert crawl.finish() == 0, crawl.log[-3000:]
        return crawl_facts(work), run


@pytest.mark.slow
def test_sigkill_at_random_points_loses_nothing(
    fault_web: Any, fault_reference: CrawlFacts, tmp_path: Path
) -> None:
    seed = int(os.environ.get("FOCUSCRAWL_TEST_SEED", "17"))
    reference = fault_reference
    facts, runs = killed_crawl(fault_web, tmp_path, KILLS, seed, len(reference.fetched))
    assert runs == KILLS + 1
    quarantined = {r.url for r in read_records(str(tmp_path / "job" / QUARANTINE_FILE))}
    assert not quarantined, f"innocent pages quarantined (seed {seed}): {sorted(quarantined)}"
    missing = comparable(reference.reached) - comparable(facts.reached) - quarantined
    assert not missing, f"pages lost (seed {seed}): {sorted(missing)[:20]}"
    assert facts.repeated <= 2 * CONCURRENCY * KILLS, facts.fetches.most_common(10)
    assert_index_holds_the_relevant(facts, quarantined)
    # a page fetched and killed before its visit was recorded comes back and is recorded, unless
    # it was in flight at a second kill too: then it is quarantined (issue 14), never recorded
    unrecorded = facts.fetched - facts.recorded - quarantined
    assert not unrecorded, sorted(unrecorded)[:10]


def assert_index_holds_the_relevant(facts: CrawlFacts, quarantined: set[str]) -> None:
    """The index holds exactly the pages judged relevant at their last fetch, but for a page
    judged relevant, killed before its index update, then in flight at a second kill: it is
    quarantined (issue 14) and never fetched again, so never indexed (listed, not lost)."""
    unindexed = facts.relevant - facts.indexed
    assert unindexed <= quarantined, (
        f"relevant, not indexed: {sorted(unindexed - quarantined)[:10]}; quarantined: "
        f"{sorted(quarantined)[:10]}"
    )
    assert facts.indexed <= facts.relevant, sorted(facts.indexed - facts.relevant)[:10]


def killed_worker_crawl(
    web: Any, work: Path, redis_url: str, kills: int, seed: int, total: int
) -> tuple[CrawlFacts, int]:
    """A ``topical_redis`` worker killed ``kills`` times at random page counts, a new one
    started each time (the dead one's leases come back to it), the last one to the end."""
    rng = random.Random(seed)
    topic = topic_file(work, web)
    cluster = [*BFS, "-s", f"REDIS_URL={redis_url}", "-s", "FOCUSCRAWL_REDIS_LEASE=3"]
    done = 0
    run = 0
    while True:
        run += 1
        worker = CrawlProcess(work, "topical_redis", crawl_args(web, topic, work, run, *cluster))
        if run <= kills:
            at = rng.randint(10, max(20, (total - done) // (kills - run + 2)))
            assert worker.wait_for_pages(at), worker.log[-3000:]
            worker.kill(signal.SIGKILL)
            assert worker.finish() == -signal.SIGKILL
            done += at
            continue
        assert worker.finish() == 0, worker.log[-3000:]
        return crawl_facts(work), run


@pytest.mark.slow
def test_sigkill_of_a_redis_worker_at_random_points_loses_nothing(
    fault_web: Any, fault_reference: CrawlFacts, tmp_path: Path, redis_url: str, redis_client: Any
) -> None:
    seed = int(os.environ.get("FOCUSCRAWL_TEST_SEED", "17"))
    reference = fault_reference
    facts, _ = killed_worker_crawl(
        fault_web, tmp_path, redis_url, KILLS, seed, len(reference.fetched)
    )
    quarantined = {r.url for r in read_redis_quarantine(redis_client, "focuscrawl:topical_redis")}
    assert not quarantined, f"innocent pages quarantined (seed {seed}): {sorted(quarantined)}"
    missing = comparable(reference.reached) - comparable(facts.reached) - quarantined
    assert not missing, f"pages lost (seed {seed}): {sorted(missing)[:20]}"
    assert facts.repeated <= (2 * CONCURRENCY + 1) * KILLS, facts.fetches.most_common(10)
    assert_index_holds_the_relevant(facts, quarantined)
