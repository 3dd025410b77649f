"""Slots of a real Redis Cluster moved live (``MIGRATE``, ``SETSLOT``) under the frontier's calls.

A crawl's frontier sends, with its pop ahead, the change store's read of the URL it just popped
on the connection of a shard whose master holds that record (by the cluster client's slot table,
read once). Resharding moves slots under it: the read goes to a master that no longer serves the
record's slot and is answered ``MOVED``. Before, that refusal counted as a failover of the
shard's own master: every unread batch was sent again, refused again, for ever (the chaos soak,
``bench/bench_chaos.py``, stalled at 0 pages/min with pages queued). Now the read is a missed
read (the store reads the record itself), the slot table is refreshed, and the frontier's own
shards follow their slots (``MOVED`` on their own calls: moved like a failover).
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import pytest
from focuseval.localcluster import LocalCluster

from focuscrawl.frontier.redis_health import FrontierUnavailable
from focuscrawl.frontier.redis_shards import ShardedRedisFrontier, shard_of
from tests.frontier_contract import push

PREFIX = "fctest:reshard"
CHG = "fc:chgreshard"


def slot_of(key: str) -> int:
    from redis.crc import key_slot

    return int(key_slot(key.encode()))


@pytest.mark.redis
def test_slots_moved_live_under_the_frontier_lose_nothing_and_never_stall(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from redis.cluster import RedisCluster

    from focuscrawl.change.record import StoreError
    from focuscrawl.change.store_redis import RedisChangeStore, prefetch_command

    cluster = LocalCluster(tmp_path / "cluster", masters=3).start()
    client = RedisCluster.from_url(cluster.url)
    store = RedisChangeStore(cluster.url, prefix=CHG, cluster=True)
    # a short retry timeout: a frontier stuck on a refusal fails the test instead of hanging
    f = ShardedRedisFrontier(cluster.url, PREFIX, shards=12, retry_timeout=3.0)
    f.pop_ahead = True
    f.prefetch = lambda url, wait: prefetch_command(cluster.url, url, wait)
    try:
        store.open()
        f.open()
        urls = [f"http://h{i % 6}.test/{i}" for i in range(120)]
        for i, url in enumerate(urls):
            store.record(url, None, "new", float(i))
            push(f, url, 0.5 + i / 1000)
        store.flush()
        popped: list[str] = []

        def crawl(pages: int) -> None:  # pop, read the record (read ahead), ack: as a crawl
            for _ in range(pages):
                entry = f.pop()
                if entry is None:
                    return
                record = store.get(entry.url)
                expected = [(float(urls.index(entry.url)), "new")]
                assert record is not None and record.history[:1] == expected, entry.url
                popped.append(entry.url)
                f.ack(entry.fingerprint)

        crawl(10)  # a pop and its record's read are sent ahead now
        src, dst = sorted(int(n.port) for n in client.get_primaries())[:2]
        # 1. the change records' slots on ``src`` move to ``dst``, the frontier's shards stay
        frontier_slots = {slot_of(f"{s.prefix}:n") for s in f.shards}
        record_slots = {slot_of(store.key(u)) for u in urls} - frontier_slots
        moving = sorted(s for s in record_slots if _owner(cluster, s) == src)
        assert moving, "no record on the source master"
        for slot in moving:
            cluster.move_slot(slot, src, dst)
        crawl(40)
        # 2. the frontier's own shards on ``src`` move: MOVED on their own calls
        mine = sorted(s for s in frontier_slots if _owner(cluster, s) == src)
        assert mine
        with caplog.at_level(logging.WARNING, logger="focuscrawl.frontier.rediswire.pipeline"):
            for slot in mine:
                cluster.move_slot(slot, src, dst)
            crawl(len(urls))
        assert sum("moved from" in r.getMessage() for r in caplog.records) >= len(mine)
        # 3. a shard's slot migrated a key at a time, the frontier called between the MIGRATEs:
        # its scripts are refused (TRYAGAIN: the guard key) until the slot is settled, never
        # run on half-moved keys (before, they ran on the source, wrote keys already moved,
        # and the migration stopped on BUSYKEY)
        k = next(
            k for k, s in enumerate(f.shards) if _owner(cluster, slot_of(f"{s.prefix}:n")) == dst
        )
        hosts = [h for h in (f"m{i}.test" for i in range(400)) if shard_of(h, 12) == k][:3]
        more = [f"http://{h}/{i}" for i in range(20) for h in hosts]
        urls += more
        f.nonblocking = True  # as in a crawl: a refused call raises, the scheduler pauses
        refused: list[str] = []
        store_refused: list[str] = []

        def call_mid_migration() -> None:
            try:
                for url in more[len(refused) % len(more) :][:2]:
                    store.record(url, None, "new", float(urls.index(url)))
                    push(f, url, 0.9)
                crawl(1)
            except FrontierUnavailable as exc:
                refused.append(str(exc))
            except StoreError as exc:  # the change store's record in that slot: TRYAGAIN too
                store_refused.append(str(exc))

        for url in more[:6]:
            store.record(url, None, "new", float(urls.index(url)))
            push(f, url, 0.9)
        cluster.move_slot(slot_of(f"{f.shards[k].prefix}:n"), dst, src, 1, call_mid_migration)
        assert refused and any("TRYAGAIN" in r or "failing over" in r for r in refused), refused
        for _ in range(50):  # what was kept goes out once the slot is settled
            try:
                f.resume()
                break
            except FrontierUnavailable:
                continue
        for url in more:  # (pushed again: a URL already seen is not queued twice)
            store.record(url, None, "new", float(urls.index(url)))
            push(f, url, 0.9)
        crawl(len(urls))
        assert sorted(popped) == sorted(urls)  # each exactly once, none lost
        assert f.in_flight() == 0 and len(f) == 0
        f.flush()  # nothing held back
    finally:
        with contextlib.suppress(Exception):  # (a failure above is the one to see)
            f.close()
        store.close()
        client.close()
        cluster.stop()


def _owner(cluster: LocalCluster, slot: int) -> int:
    """The port of the master serving ``slot`` (``CLUSTER SLOTS`` of a node)."""
    import redis

    node = redis.Redis(host="127.0.0.1", port=next(iter(cluster.procs)))
    try:
        for first, last, master, *_ in node.execute_command("CLUSTER", "SLOTS"):
            if int(first) <= slot <= int(last):
                return int(master[1])
    finally:
        node.close()
    raise AssertionError(f"nobody serves slot {slot}")
