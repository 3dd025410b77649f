"""Where a 3-master cluster's extra Redis CPU per pop + ack comes from: controls side by side.

Every target has its own ``redis-server`` processes and the same URLs; ``pop()`` + ``ack()``
one by one, a chunk at a time on each target in turn, under every condition in turn (so the
machine's other load falls on all alike):

* targets: one Redis; three plain Redis with the work split three ways (three
  :class:`RedisFrontier`, hosts split as the cluster's shards are), the pops alternating
  between them, and the same in runs of 50 pops (only the order differs); the sharded
  frontier's own code over plain (non-cluster) Redis, 48 shards on 1 process and on 3; the
  3-master cluster with 3 and with 48 shards, and with 48 shards and the lease requeue as it
  was (every shard's script every second); 1 master in cluster mode with 1 shard;
* conditions: unpinned, and pinned (``sched_setaffinity``: every server on the last core, the
  client on the first); pops at full speed and at fixed rates (``--rates``, pops per second);
* idle: each target's servers' CPU per second with no load (``serverCron`` at ``hz``, the
  cluster bus), measured between rounds; the per-op figure is given as measured and with the
  idle cost of the chunk's duration taken off; and the lease requeue's cost (a round on every
  shard, and what a popping worker sends each second).

Redis CPU is ``used_cpu_user + used_cpu_sys`` from ``INFO cpu``, summed over a target's
servers; also ``/proc/PID/schedstat`` (on-CPU and run-queue wait of the main thread) and
voluntary context switches (wake-ups). ``commandstats`` per target at the end (its ``usec``
is wall time inside the command, preemption included). 2 cores here: Redis CPU per operation,
not pages per second, is what is compared.

    .venv/bin/python bench/bench_cluster_cpu_controls.py [--urls 60000] [--rounds 6]
        [--rates 0,1000,200,50] [--chunk 200] [--only 1,7] [--no-pin]
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_cluster_memory import Server  # noqa: E402
from bench_cluster_shards import workload  # noqa: E402
from focuseval.localcluster import LocalCluster  # noqa: E402

from focuscrawl.frontier.redis_frontier import RedisFrontier  # noqa: E402
from focuscrawl.frontier.redis_shards import _EMPTY, ShardedRedisFrontier  # noqa: E402
from focuscrawl.frontier.shard_keys import SLOTS, shard_of, shard_tags  # noqa: E402


class Procs:
    """A target's servers: INFO cpu, /proc schedstat and context switches, affinity."""

    def __init__(self, ports: list[int], pids: list[int]) -> None:
        self.ports, self.pids = ports, pids
        self.clients = [redis.Redis(port=p, socket_timeout=None) for p in ports]

    def sample(self) -> dict[str, float]:
        out = defaultdict(float)
        for c in self.clients:
            info = c.info("cpu")
            out["user"] += float(info["used_cpu_user"])
            out["sys"] += float(info["used_cpu_sys"])
        for pid in self.pids:
            run, wait, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
            out["run"] += int(run) / 1e9
            out["wait"] += int(wait) / 1e9
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches"):
                    out["wakeups"] += int(line.split()[1])
        return out

    def pin(self, cpus: set[int]) -> None:
        for pid in self.pids:
            for tid in os.listdir(f"/proc/{pid}/task"):
                os.sched_setaffinity(int(tid), cpus)

    def commandstats(self) -> dict[str, tuple[int, int]]:
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for c in self.clients:
            for name, v in c.info("commandstats").items():
                out[name][0] += int(v["calls"])
                out[name][1] += int(v["usec"])
        return {k: (v[0], v[1]) for k, v in out.items()}

    def reset(self) -> None:
        for c in self.clients:
            c.config_resetstat()

    def close(self) -> None:
        for c in self.clients:
            c.close()


class RoundRobin:
    """Three plain Redis, the work split three ways: hosts split by :func:`shard_of`, pops
    taken from each in turn, each ack sent to the instance that popped."""

    def __init__(self, urls: list[str], prefix: str, capacity: int, run: int = 1) -> None:
        n = len(urls)
        self.parts = [RedisFrontier(u, prefix, capacity=capacity // n) for u in urls]
        self.turn = 0
        self.run = run  # pops on one instance before the next one's turn
        self.left = run
        self.owner: dict[bytes, RedisFrontier] = {}

    @property
    def sends(self) -> int:
        return sum(p.sends for p in self.parts)

    def open(self) -> None:
        for p in self.parts:
            p.open()

    def push_many(self, items: list[Any], on_results: Any = None) -> None:
        groups: dict[int, list[Any]] = defaultdict(list)
        for item in items:
            groups[shard_of(item[0].split("/")[2], len(self.parts))].append(item)
        for k, group in groups.items():
            self.parts[k].push_many(group)

    def flush(self) -> None:
        for p in self.parts:
            p.flush()

    def pop(self) -> Any:
        for _ in self.parts:
            part = self.parts[self.turn]
            self.left -= 1
            if self.left <= 0:
                self.turn = (self.turn + 1) % len(self.parts)
                self.left = self.run
            entry = part.pop()
            if entry is not None:
                self.owner[entry.fingerprint] = part
                return entry
        return None

    def ack(self, fp: bytes) -> None:
        self.owner.pop(fp).ack(fp)

    def close(self) -> None:
        for p in self.parts:
            p.close()


class PlainSharded(ShardedRedisFrontier):
    """The sharded frontier's own code with its shards on plain (non-cluster) Redis: shard
    ``k`` on the server whose share of the slot range holds its tag, as on the cluster."""

    def __init__(self, urls: list[str], prefix: str, shards: int, **kw: Any) -> None:
        super().__init__(urls[0], prefix, shards=shards, **kw)
        self.urls = urls

    def open(self) -> None:
        from redis.crc import key_slot

        n = self.shard_count
        kw = {**self.shard_kw, "capacity": max(1, int(self.shard_kw["capacity"]) // n)}
        self.shards = []
        for tag in shard_tags(n):
            url = self.urls[key_slot(tag.encode()) * len(self.urls) // SLOTS]
            shard = RedisFrontier(url, f"{self.prefix}:{{{tag}}}", **kw)
            shard.open()
            self.shards.append(shard)
        self._head = [_EMPTY] * n
        self._refresh(range(n))

    def close(self) -> None:
        self._send_held(force=True)
        for shard in self.shards:
            shard.close()


class EveryShard(ShardedRedisFrontier):
    """The lease requeue as it was before: every shard's script every ``requeue_interval``."""

    def requeue_expired(self, force: bool = False) -> int:
        if time.monotonic() >= self._next_requeue:
            self._requeue_at = [0.0] * len(self.shards)
        return super().requeue_expired(force)


def _clocked(frontier: Any) -> list[Any]:
    return [frontier, *getattr(frontier, "shards", ()), *getattr(frontier, "parts", ())]


def pause_clock(frontier: Any) -> None:
    """The lease requeue (every ``requeue_interval`` of a worker's time) counts only the time
    a target runs: paused while the others take their turn, as if each ran alone."""
    frontier._paused_at = time.monotonic()


def resume_clock(frontier: Any) -> None:
    paused = time.monotonic() - getattr(frontier, "_paused_at", time.monotonic())
    for f in _clocked(frontier):
        if hasattr(f, "_next_requeue"):
            f._next_requeue += paused


def requeue_cost(targets: dict[str, Any], times: int) -> dict[str, tuple[float, float, float]]:
    """Per target: Redis CPU of a lease-requeue round forced on every shard, and of the
    round a worker sends every ``requeue_interval`` (second) as it pops (its scripts
    counted): ``times`` of each, in turn on each target, after the pops measured."""
    out = {name: [0.0, 0.0, 0.0] for name in targets}
    for _ in range(times):
        for name, (frontier, procs) in targets.items():
            parts = getattr(frontier, "parts", [frontier])
            before = procs.sample()
            after = procs.sample()  # what reading INFO costs: taken off the two below
            nothing = after["user"] + after["sys"] - before["user"] - before["sys"]
            out[name][0] -= nothing / times
            out[name][1] -= nothing / times
            before = procs.sample()
            for f in parts:
                f.requeue_expired(force=True)
            after = procs.sample()
            out[name][0] += (after["user"] + after["sys"] - before["user"] - before["sys"]) / times
            sent = frontier.sends
            for f in parts:
                f._next_requeue = 0.0  # a second later
            before = procs.sample()
            for f in parts:
                f.requeue_expired()
            after = procs.sample()
            out[name][1] += (after["user"] + after["sys"] - before["user"] - before["sys"]) / times
            out[name][2] += (frontier.sends - sent) / times
    return {name: (a, b, c) for name, (a, b, c) in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=60_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--chunk", type=int, default=200, help="pops per chunk at full speed")
    parser.add_argument("--rates", default="0,1000,200,50", help="pops/s, 0 = full speed")
    parser.add_argument("--idle", type=float, default=1.0, help="idle window per round, s")
    parser.add_argument("--only", default="", help="comma-separated target numbers")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    n = args.urls
    rates = [float(r) for r in args.rates.split(",")]
    items = list(workload(n, 1000))
    tmp = Path(tempfile.mkdtemp(prefix="fc-bench-cpuctl-"))
    servers: list[Server] = []
    clusters: list[LocalCluster] = []

    def plain(count: int) -> tuple[list[str], Procs]:
        made = [Server() for _ in range(count)]
        servers.extend(made)
        return [s.url for s in made], Procs([s.port for s in made], [s.proc.pid for s in made])

    def cluster(masters: int) -> tuple[str, Procs]:
        c = LocalCluster(tmp / f"c{len(clusters)}", masters).start()
        clusters.append(c)
        return c.url, Procs(c.ports, [c.procs[p].pid for p in c.ports])

    def one(u: list[str], p: Procs) -> tuple[Any, Procs]:
        return RedisFrontier(u[0], "p", capacity=n), p

    def split(run: int) -> Any:
        return lambda u, p: (RoundRobin(u, "p", capacity=n, run=run), p)

    def sharded(k: int, cls: Any = ShardedRedisFrontier) -> Any:
        if cls is PlainSharded:
            return lambda u, p: (PlainSharded(u, "p", k, capacity=n), p)
        return lambda u, p: (cls(u, "p", shards=k, capacity=n), p)

    makers: dict[str, tuple[Any, Any]] = {  # name: (servers, frontier over them)
        "one Redis": (lambda: plain(1), one),
        "3 plain Redis, alternating": (lambda: plain(3), split(1)),
        "3 plain Redis, runs of 50": (lambda: plain(3), split(50)),
        "plain, 1 process, 48 shards": (lambda: plain(1), sharded(48, PlainSharded)),
        "plain, 3 processes, 48 shards": (lambda: plain(3), sharded(48, PlainSharded)),
        "cluster, 1 master, 1 shard": (lambda: cluster(1), sharded(1)),
        "cluster, 3 masters, 3 shards": (lambda: cluster(3), sharded(3)),
        "cluster, 3 masters, 48 shards": (lambda: cluster(3), sharded(48)),
        "the same, requeue every shard/s": (lambda: cluster(3), sharded(48, EveryShard)),
    }
    names = list(makers)
    if args.only:
        names = [names[0]] + [names[int(i)] for i in args.only.split(",") if int(i) != 0]
    conds = [
        (pin, rate) for pin in ((False, True) if not args.no_pin else (False,)) for rate in rates
    ]
    all_cpus = set(range(os.cpu_count() or 1))
    server_cpu, client_cpu = {max(all_cpus)}, {min(all_cpus)}
    me = os.getpid()
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M:%S} UTC, load {os.getloadavg()}")
    targets: dict[str, tuple[Any, Procs]] = {}
    try:
        for name in names:
            servers_of, frontier_of = makers[name]
            targets[name] = frontier_of(*servers_of())
        for frontier, procs in targets.values():
            frontier.open()
            frontier.push_many(items, on_results=lambda results: None)
            frontier.flush()
            procs.reset()
        cpu: dict[tuple[str, bool, float], dict[str, float]] = defaultdict(
            lambda: defaultdict(float)
        )
        idle: dict[tuple[str, bool], dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for _ in range(args.rounds):
            for pin in sorted({p for p, _ in conds}):
                for _, procs in targets.values():
                    procs.pin(server_cpu if pin else all_cpus)
                os.sched_setaffinity(me, client_cpu if pin else all_cpus)
                before = {name: procs.sample() for name, (_, procs) in targets.items()}
                t0 = time.perf_counter()
                time.sleep(args.idle)
                dt = time.perf_counter() - t0
                for name, (_, procs) in targets.items():
                    after = procs.sample()
                    for key in after:
                        idle[name, pin][key] += after[key] - before[name][key]
                    idle[name, pin]["seconds"] += dt
                for p, rate in conds:
                    if p != pin:
                        continue
                    count = args.chunk if not rate else max(20, int(rate * 0.25))
                    for name, (frontier, procs) in targets.items():
                        resume_clock(frontier)
                        before_s, sent = procs.sample(), frontier.sends
                        t0 = time.perf_counter()
                        for i in range(count):
                            entry = frontier.pop()
                            frontier.ack(entry.fingerprint)
                            if rate:
                                wait = t0 + (i + 1) / rate - time.perf_counter()
                                if wait > 0:
                                    time.sleep(wait)
                        frontier.flush()
                        dt = time.perf_counter() - t0
                        pause_clock(frontier)
                        after = procs.sample()
                        row = cpu[name, pin, rate]
                        for key in after:
                            row[key] += after[key] - before_s[key]
                        row["seconds"] += dt
                        row["ops"] += count
                        row["sends"] += frontier.sends - sent
        os.sched_setaffinity(me, all_cpus)
        for _, procs in targets.values():
            procs.pin(all_cpus)
        stats = {name: procs.commandstats() for name, (_, procs) in targets.items()}
        requeue = requeue_cost(targets, 10)
        report(targets, cpu, idle, conds, requeue, stats)
    finally:
        os.sched_setaffinity(me, set(range(os.cpu_count() or 1)))
        for frontier, procs in targets.values():
            try:
                frontier.close()
            finally:
                procs.close()
        for s in servers:
            s.stop()
        for c in clusters:
            c.stop()


def _label(pin: bool, rate: float) -> str:
    return f"{'pinned' if pin else 'free'} {f'{rate:.0f}/s' if rate else 'max'}"


def report(
    targets: dict[str, Any],
    cpu: Any,
    idle: Any,
    conds: list[tuple[bool, float]],
    requeue: dict[str, tuple[float, float, float]],
    stats: dict[str, dict[str, tuple[int, int]]],
) -> None:
    base_name = next(iter(targets))
    pins = sorted({p for p, _ in conds})
    print("\nlease requeue: Redis CPU of a round forced on every shard; of the round sent each")
    print("second by a popping worker (after the pops above), and the sends it took")
    for name in targets:
        full, tick, sends = requeue[name]
        print(
            f"  {name:<34} {full * 1e6:7.1f} µs   each second {tick * 1e6:7.1f} µs, {sends:4.1f} sends"
        )
    print("\nidle (no load), per server: ms of Redis CPU per second, wake-ups per second")
    for name, (_, procs) in targets.items():
        cells = []
        for pin in pins:
            row = idle[name, pin]
            per = len(procs.ports) * row["seconds"]
            cells.append(
                f"{'pinned' if pin else 'free'} {(row['user'] + row['sys']) / per * 1e3:5.2f} ms/s"
                f" {row['wakeups'] / per:5.1f}/s"
            )
        print(f"  {name:<34} {len(procs.ports)} servers  " + "   ".join(cells))

    def figures(name: str, pin: bool, rate: float) -> tuple[float, float, float]:
        """Redis CPU per pop + ack (µs): as measured, idle cost of the time taken off, and
        on-CPU time of the servers' main threads (schedstat)."""
        row, irow = cpu[name, pin, rate], idle[name, pin]
        total = row["user"] + row["sys"]
        idle_rate = (irow["user"] + irow["sys"]) / irow["seconds"]
        return (
            total / row["ops"] * 1e6,
            (total - idle_rate * row["seconds"]) / row["ops"] * 1e6,
            row["run"] / row["ops"] * 1e6,
        )

    for pin, rate in conds:
        label = "pinned: every server on one core, the client on the other" if pin else "unpinned"
        print(f"\n{label}, {f'{rate:.0f} pops/s' if rate else 'pops at full speed'}")
        print(
            f"  {'target':<34} {'µs/op':>6} {'ratio':>6} {'-idle':>6} {'ratio':>6}"
            f" {'/server':>7} {'sched':>6} {'ratio':>6} {'rq wait':>7} {'wakes':>5}"
            f" {'sends':>5} {'ops/s':>5}"
        )
        b = figures(base_name, pin, rate)
        for name, (_, procs) in targets.items():
            row = cpu[name, pin, rate]
            f = figures(name, pin, rate)
            print(
                f"  {name:<34} {f[0]:6.1f} {f[0] / b[0]:5.2f}x {f[1]:6.1f} {f[1] / b[1]:5.2f}x"
                f" {f[1] / len(procs.ports):7.1f} {f[2]:6.1f} {f[2] / b[2]:5.2f}x"
                f" {row['wait'] / row['ops'] * 1e6:7.1f} {row['wakeups'] / row['ops']:5.2f}"
                f" {row['sends'] / row['ops']:5.2f} {row['ops'] / row['seconds']:5.0f}"
            )
    print("\nkernel share (used_cpu_sys / both, all conditions; sampled at clock ticks)")
    for name in targets:
        rows = [cpu[name, p, r] for p, r in conds]
        sys_s, both = sum(r["sys"] for r in rows), sum(r["sys"] + r["user"] for r in rows)
        print(
            f"  {name:<34} {sys_s / both * 100:5.1f} %  ({both * 1e6 / sum(r['ops'] for r in rows):6.1f} µs/op)"
        )
    print("\nside by side: Redis CPU per pop + ack against one Redis (idle cost taken off)")
    print(f"  {'target':<34}" + "".join(f" {_label(p, r):>11}" for p, r in conds))
    for name in targets:
        cells = []
        for pin, rate in conds:
            cells.append(figures(name, pin, rate)[1] / figures(base_name, pin, rate)[1])
        print(f"  {name:<34}" + "".join(f" {c:10.2f}x" for c in cells))

    print("\ncommandstats per pop + ack, all conditions: calls, usec per call (wall time inside)")
    ops = {name: sum(cpu[name, p, r]["ops"] for p, r in conds) for name in targets}
    keys = sorted(
        {k for st in stats.values() for k in st if k != "cmdstat_info"},
        key=lambda k: -stats[base_name].get(k, (0, 0))[1],
    )
    short = {name: f"T{i}" for i, name in enumerate(targets)}
    print("  " + ", ".join(f"{short[n]} {n}" for n in targets))
    print(f"  {'command':<16}" + "".join(f" {short[n]:>12}" for n in targets))
    for key in keys:
        cells = []
        for name in targets:
            calls, usec = stats[name].get(key, (0, 0))
            cells.append(f"{calls / ops[name]:5.2f} {usec / max(calls, 1):5.1f}")
        print(f"  {key[8:]:<16}" + "".join(f" {c:>12}" for c in cells))
    total = {
        n: sum(u for k, (_, u) in stats[n].items() if k != "cmdstat_info") / ops[n] for n in targets
    }
    print(f"  {'usec per op':<16}" + "".join(f" {total[n]:12.1f}" for n in targets))


if __name__ == "__main__":
    main()
