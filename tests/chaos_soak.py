"""The chaos soak of the cluster (issue 29): real ``topical_redis`` workers over a local Redis
Cluster while a driver injects faults on a seeded schedule. Run by ``bench/bench_chaos.py``
(20 minutes, the whole synthetic web) and ``tests/test_chaos_slice.py`` (a minute, small web).

* ``workers`` processes (default 3) crawl the synthetic test web (``focuscrawl testweb``,
  breadth-first, loopback only) over a 3-master cluster with a replica each and AOF
  (``appendonly yes``), all with one ``FOCUSCRAWL_DATA_DIR`` (one SQLite index, written by each
  worker's index thread, ``FOCUSCRAWL_INDEX_WRITER_THREAD=1``) mounted as a small tmpfs when
  the process may mount (root), else a plain folder (then no disk-full fault);
* a supervisor restarts every worker that died (SIGKILL, a stop on the full disk), samples
  each one's peak RSS (``VmHWM``) and ends the run once every worker exited 0 (crawl done);
* the driver thread runs :func:`plan` (a seeded schedule): ``kill-worker`` (SIGKILL a random
  worker, restarted at once), ``kill-master`` (SIGKILL a master, wait for its replica's
  promotion, restart the old one: it rejoins as a replica), ``reshard`` (``redis-cli --cluster
  reshard``: live slot migration between two masters), ``pause`` (``CLIENT PAUSE`` on every
  master), ``disk-full`` (the data dir's filesystem filled for a while, then freed).

What the run found is checked by :mod:`tests.chaos_checks`.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focuseval.localcluster import LocalCluster

from focuscrawl.netguard import allow_private_args
from tests.chaos_checks import (
    Duplicates,
    StoreCheck,
    check_stores,
    duplicates,
    last_relevant,
    quarantined,
    read_fetches,
)
from tests.chaos_parts import DataDisk, Worker, peak_rss_kb
from tests.test_cluster_workers import PREFIX

CONCURRENCY = 8
EVENTS = ("kill-worker", "kill-master", "reshard", "pause", "disk-full")


@dataclass(slots=True)
class Event:
    at: float  # seconds after the crawl started
    kind: str
    done_at: float = -1.0
    note: str = ""


def plan(minutes: float, rng: random.Random, kinds: tuple[str, ...] = EVENTS) -> list[Event]:
    """The schedule: a worker kill about every 60 s (at least one), and one of each other
    fault, spread over the run's first 80 % (the rest is left for the crawl to settle)."""
    span = minutes * 60.0
    events: list[Event] = []
    if "kill-worker" in kinds:
        n = max(1, round(span / 60.0))
        step = span * 0.85 / n
        events += [
            Event(step * (i + 0.5) + rng.uniform(-0.2, 0.2) * step, "kill-worker") for i in range(n)
        ]
    slots = [k for k in ("disk-full", "kill-master", "reshard", "pause") if k in kinds]
    order = rng.sample(slots, len(slots))  # one each, in a seeded order, spread over the run
    for i, kind in enumerate(order):
        events.append(Event(span * 0.8 * (i + 1) / (len(order) + 1), kind))
    return sorted(events, key=lambda e: e.at)


@dataclass
class Incarnation:
    name: str  # "w2-3"
    slot: int
    log: Path
    worker: Worker
    started: float
    died: bool = False  # SIGKILLed by the driver, or exited non-zero
    code: int | None = None
    peak_rss_kb: int = 0


@dataclass
class Facts:
    fetched: set[str] = field(default_factory=set)
    lost: list[str] = field(default_factory=list)  # reachable, never fetched
    duplicates: Duplicates = field(default_factory=Duplicates)
    stores: StoreCheck = field(default_factory=StoreCheck)
    quarantined: int = 0
    queued: int = -1
    in_flight: int = -1
    redelivered: int = 0


@dataclass
class SoakRun:
    events: list[Event] = field(default_factory=list)
    incarnations: list[Incarnation] = field(default_factory=list)
    took: float = 0.0
    wall_start: float = 0.0  # time.time() when the topic was published (events count from it)
    finished: bool = False  # every worker exited 0 by itself
    disk: str = ""  # how the disk-full fault was made
    errors: list[str] = field(default_factory=list)  # tracebacks, signal-handler errors
    facts: Facts = field(default_factory=Facts)

    @property
    def died(self) -> set[str]:
        return {i.name for i in self.incarnations if i.died}

    def peak_rss_mb(self, slot: int) -> float:
        return max((i.peak_rss_kb for i in self.incarnations if i.slot == slot), default=0) / 1024


class Soak:
    """One soak (see the module docstring); :meth:`run` returns what happened."""

    def __init__(
        self,
        work: Path,
        web: Any,
        reachable: set[str],
        *,
        minutes: float,
        seed: int,
        workers: int = 3,
        lease: float = 15.0,
        pause_ms: int = 10_000,
        full_seconds: float = 15.0,
        reshard_slots: int = 1000,
        kinds: tuple[str, ...] = EVENTS,
        disk_mb: int = 1024,
        timeout: float = 1800.0,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.work = work
        self.web = web
        self.reachable = reachable
        self.minutes = minutes
        self.rng = random.Random(seed)
        self.n_workers = workers
        self.lease = lease
        self.pause_ms = pause_ms
        self.full_seconds = full_seconds
        self.reshard_slots = reshard_slots
        self.kinds = kinds
        self.disk_mb = disk_mb
        self.timeout = timeout
        self.extra = extra
        self.data = work / "data"
        self.run_ = SoakRun()
        self.lock = threading.Lock()
        self.live: dict[int, Incarnation] = {}
        self.counts: dict[int, int] = {}
        self.disk_full = threading.Event()
        self.stop = threading.Event()
        self.cluster: LocalCluster | None = None
        self.start = 0.0

    # -- workers --------------------------------------------------------------------------
    def spawn(self, slot: int) -> Incarnation:
        assert self.cluster is not None
        self.counts[slot] = self.counts.get(slot, 0) + 1
        name = f"w{slot}-{self.counts[slot]}"
        log = self.work / "logs" / f"{name}.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        args = [
            "-s", "FOCUSCRAWL_REDIS_CLUSTER=True",
            "-s", "FOCUSCRAWL_STRATEGY=bfs",
            "-s", f"CONCURRENT_REQUESTS={CONCURRENCY}",
            "-s", "FOCUSCRAWL_INDEX_WRITER_THREAD=True",
            "-s", f"FOCUSCRAWL_CRAWL_LOG={log}",
            "-s", f"FOCUSCRAWL_STATS_FILE={self.work / 'logs' / (name + '.stats.json')}",
            "-s", "FOCUSCRAWL_PROGRESS_INTERVAL=5",
            "-s", f"FOCUSCRAWL_REDIS_LEASE={self.lease:g}",
            "-s", f"FOCUSCRAWL_DATA_DIR={self.data}",
            *allow_private_args(self.web.hosts),
            *self.extra,
        ]  # fmt: skip
        worker = Worker(self.work, name, self.cluster.url, *args, log=log.with_suffix(".log"))
        inc = Incarnation(name, slot, log, worker, time.monotonic() - self.start)
        self.run_.incarnations.append(inc)
        self.live[slot] = inc
        return inc

    def supervise(self) -> None:
        """Restart dead workers, sample peak RSS; return once every worker exited 0."""
        done: set[int] = set()
        deadline = time.monotonic() + self.minutes * 60 + self.timeout
        while len(done) < self.n_workers and time.monotonic() < deadline:
            with self.lock:
                for slot, inc in list(self.live.items()):
                    proc = inc.worker.proc
                    inc.peak_rss_kb = max(inc.peak_rss_kb, peak_rss_kb(proc.pid))
                    code = proc.poll()
                    if code is None:
                        continue
                    inc.code = code
                    del self.live[slot]
                    inc.worker.finish(60)
                    if code == 0 and not inc.died:
                        done.add(slot)
                        continue
                    inc.died = True
                    if not self.disk_full.is_set():
                        self.spawn(slot)
                if not self.disk_full.is_set():  # workers stopped by the full disk: back now
                    for slot in range(1, self.n_workers + 1):
                        if slot not in self.live and slot not in done:
                            self.spawn(slot)
            self.stop.wait(0.5)
        self.run_.finished = len(done) == self.n_workers

    # -- faults ---------------------------------------------------------------------------
    def drive(self, events: list[Event]) -> None:
        for event in events:
            if self.stop.wait(max(0.0, self.start + event.at - time.monotonic())):
                return
            try:
                event.note = getattr(self, "do_" + event.kind.replace("-", "_"))()
            except Exception as exc:  # noqa: BLE001 - a fault that could not be made: reported
                event.note = f"FAILED: {exc!r}"
            event.done_at = time.monotonic() - self.start

    def do_kill_worker(self) -> str:
        with self.lock:
            if not self.live:
                return "no worker alive"
            slot = self.rng.choice(sorted(self.live))
            inc = self.live[slot]
            inc.died = True
            os.kill(inc.worker.proc.pid, signal.SIGKILL)
        return f"SIGKILL {inc.name}"

    def masters(self) -> list[tuple[str, int]]:
        """(node id, port) of every master serving slots, asked of a live node."""
        import redis

        assert self.cluster is not None
        for port in list(self.cluster.procs):
            node = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
            try:
                text = node.execute_command("CLUSTER", "NODES")
            except redis.RedisError:
                continue
            finally:
                node.close()
            text = text.decode() if isinstance(text, bytes) else text
            out = []
            for line in text.splitlines():
                parts = line.split()
                if "master" in parts[2] and "fail" not in parts[2] and len(parts) > 8:
                    out.append((parts[0], int(parts[1].split(":")[1].split("@")[0])))
            return sorted(out, key=lambda m: m[1])
        raise RuntimeError("no cluster node answers CLUSTER NODES")

    def do_kill_master(self) -> str:
        assert self.cluster is not None
        _, port = self.rng.choice(self.masters())
        t0 = time.monotonic()
        self.cluster.kill(port)
        self.cluster.wait_ok()  # its replica promoted, every slot served
        promoted = time.monotonic() - t0
        self.cluster.start_node(port)  # its nodes.conf: it rejoins as a replica
        self.cluster.wait_ok()
        return f"SIGKILL master :{port}, replica promoted in {promoted:.1f}s, old one rejoined"

    def do_reshard(self) -> str:
        src, dst = self.rng.sample(self.masters(), 2)
        t0 = time.monotonic()
        done = subprocess.run(
            [
                shutil.which("redis-cli") or "redis-cli",
                "--cluster",
                "reshard",
                f"127.0.0.1:{src[1]}",
                "--cluster-from",
                src[0],
                "--cluster-to",
                dst[0],
                "--cluster-slots",
                str(self.reshard_slots),
                "--cluster-yes",
            ],  # fmt: skip
            capture_output=True,
            text=True,
            timeout=900,
        )
        took = time.monotonic() - t0
        (self.work / "reshard.log").write_text(done.stdout + done.stderr)
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            return f"reshard FAILED ({done.returncode}) after {took:.1f}s: {tail}"
        return f"{self.reshard_slots} slots :{src[1]} -> :{dst[1]} in {took:.1f}s"

    def do_pause(self) -> str:
        import redis

        ports = [port for _, port in self.masters()]
        for port in ports:
            node = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
            node.execute_command("CLIENT", "PAUSE", self.pause_ms)
            node.close()
        return f"CLIENT PAUSE {self.pause_ms} on masters {ports}"

    def do_disk_full(self) -> str:
        if not self.disk.mounted:
            return "skipped: cannot mount a tmpfs (not root)"
        self.disk_full.set()
        try:
            written = self.disk.fill()
            self.stop.wait(self.full_seconds)
            with self.lock:
                stopped = [i.name for i in self.run_.incarnations if i.worker.count("disk is full")]
        finally:
            self.disk.free()
            self.disk_full.clear()
        return f"data dir full for {self.full_seconds:.0f}s ({written >> 20} MB filler); stopped: {stopped}"

    # -- the run --------------------------------------------------------------------------
    def run(self) -> SoakRun:
        from redis.cluster import RedisCluster

        from focuscrawl.cluster.state import publish_topic
        from focuscrawl.topic import load_topic

        run = self.run_
        run.events = plan(self.minutes, self.rng, self.kinds)
        self.disk = DataDisk(self.data, self.disk_mb)
        with self.disk:
            run.disk = "tmpfs" if self.disk.mounted else "folder (no mount: no disk-full fault)"
            self.cluster = LocalCluster(
                self.work / "cluster", masters=3, replicas=1, appendonly=True
            ).start()
            client = RedisCluster.from_url(self.cluster.url)
            driver = threading.Thread(target=self.drive, args=(run.events,), daemon=True)
            try:
                with self.lock:
                    for slot in range(1, self.n_workers + 1):
                        self.spawn(slot)
                for inc in list(self.live.values()):
                    assert inc.worker.wait_for_line("Waiting to join crawl"), inc.worker.log
                self.start = time.monotonic()
                run.wall_start = time.time()
                seeds = ",".join(self.web.seeds["birds"])
                publish_topic(client, PREFIX, load_topic("birds", seeds))
                driver.start()
                self.supervise()
                run.took = time.monotonic() - self.start
                self.stop.set()
                driver.join(60)
                fresh = RedisCluster.from_url(self.cluster.url)  # the topology as it is now
                try:
                    run.facts = self.facts(fresh)
                finally:
                    fresh.close()
            finally:
                self.stop.set()
                with self.lock:
                    for inc in self.live.values():
                        inc.worker.kill()
                for inc in run.incarnations:
                    text = inc.log.with_suffix(".log").read_text(errors="replace")
                    run.errors += [
                        f"{inc.name}: {line.strip()}"
                        for line in text.splitlines()
                        if "Error caught on signal" in line or "Traceback" in line
                    ]
                client.close()
                self.cluster.stop()
        return run

    def facts(self, client: Any) -> Facts:
        """What the crawl left, read before the cluster and the data dir go away."""
        from focuscrawl.cluster.state import read_status

        logs = {inc.name: inc.log for inc in self.run_.incarnations}
        fetches = read_fetches(logs)
        facts = Facts(fetched={f.url for f in fetches})
        facts.lost = sorted(self.reachable - facts.fetched)
        facts.duplicates = duplicates(fetches, self.run_.died)
        facts.stores = check_stores(self.data / "index.sqlite", client, last_relevant(fetches))
        facts.quarantined = quarantined(client, PREFIX)
        status = read_status(client, PREFIX)
        facts.queued, facts.in_flight = status.queued, status.in_flight
        facts.redelivered = status.redelivered
        return facts
