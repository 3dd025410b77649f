"""The chaos soak of the cluster (issue 29): workers over a local Redis Cluster under faults.

Three real ``topical_redis`` workers (one data dir, the index written by each one's writer
thread) crawl the synthetic test web (``--pages`` articles, default 20,000; loopback only)
breadth-first over a local 3-master Redis Cluster with a replica each and AOF, while a driver
with a seeded RNG (``--seed``) SIGKILLs a worker about every 60 s (restarted at once), SIGKILLs
a master (its replica is promoted; the old one restarted, it rejoins as a replica), moves
``--reshard-slots`` slots between two masters live (``redis-cli --cluster reshard``), pauses
every master for 10 s (``CLIENT PAUSE``) and fills the data dir's filesystem (a tmpfs of its
own; root only) for 15 s. The schedule spans ``--minutes``; then the crawl runs to its end
(three workers fetch the synthetic web at about 70 pages/s here: ``--latency-ms`` slows the web
so that 20,000 pages last the 20 minutes).
See ``tests/chaos_soak.py`` (the scenario) and ``tests/chaos_checks.py`` (the checks).

Printed: the events as they happened, then each check with its verdict: pages lost (reachable
from the seeds by the web's link graph, never fetched), duplicates after kills against the
bound (2 × CONCURRENT_REQUESTS per death, as ``bench_faults``), live-worker duplicates, relevant
pages (by their last judgement) missing from the index, indexed pages whose change-store version
is not the index's, ``PRAGMA integrity_check``, pages quarantined (all innocent: no page of that
web kills a worker), and each worker's peak RSS. The baseline beside the figures: the web's
reachable set, which an uninterrupted crawl fetches whole (``--reference``: one such crawl,
timed, in the same run).

    .venv/bin/python bench/bench_chaos.py --latency-ms 1000       # 20 minutes, 20,000 pages
    .venv/bin/python bench/bench_chaos.py --minutes 3 --pages 6000 --seed 1
    .venv/bin/python bench/bench_chaos.py --plot-from RUN_FOLDER --plot chaos.png   # (--keep)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from focuseval.synthetic import SyntheticWeb  # noqa: E402
from focuseval.testweb import TestWebProcess  # noqa: E402

from tests.chaos_checks import reachable, read_fetches  # noqa: E402
from tests.chaos_soak import CONCURRENCY, EVENTS, Soak, SoakRun  # noqa: E402

SEED = 7  # the web's own seed (the test web's default)


def reachable_urls(web: TestWebProcess, pages: int) -> set[str]:
    """The pages reachable from the birds seeds by content links (rebuilt from the seed)."""
    graph = SyntheticWeb(hosts=web.hosts, port=web.port, seed=SEED, n_pages=pages)
    return reachable(graph.pages, web.seeds["birds"], graph.url)


def save_events(run: SoakRun, work: Path) -> None:
    events = [
        {"at": e.at, "done_at": e.done_at, "kind": e.kind, "note": e.note} for e in run.events
    ]
    data = {"wall_start": run.wall_start, "events": events}
    (work / "events.json").write_text(json.dumps(data, indent=1))


def plot(work: Path, out: Path) -> None:
    """Pages fetched per 10 s and in all over the run, each fault a vertical line (from the
    run's folder: its crawl logs and ``events.json``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = json.loads((work / "events.json").read_text())
    logs = {p.stem: p for p in (work / "logs").glob("*.jsonl")}
    times = [f.t - data["wall_start"] for f in read_fetches(logs)]
    fig, ax = plt.subplots(figsize=(10, 4))
    bins = max(1, int(max(times, default=0) // 10) + 1)
    ax.hist(times, bins=bins, range=(0, bins * 10), color="#4a7ab5", label="pages fetched / 10 s")
    ax.set_xlabel("seconds since the crawl started")
    ax.set_ylabel("fetches per 10 s")
    total = ax.twinx()
    total.plot(sorted(times), range(1, len(times) + 1), color="black", lw=1, label="fetches")
    total.set_ylabel("fetches in all")
    colours = {"kill-worker": "#d62728", "kill-master": "#9467bd", "reshard": "#2ca02c",
               "pause": "#ff7f0e", "disk-full": "#8c564b"}  # fmt: skip
    seen: set[str] = set()
    for e in data["events"]:
        label = e["kind"] if e["kind"] not in seen else None
        seen.add(e["kind"])
        ax.axvline(e["at"], color=colours.get(e["kind"], "grey"), lw=1, ls="--", label=label)
    ax.legend(loc="upper left", fontsize=8, ncol=3)
    ax.set_title("chaos soak: fetches and faults")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def verdict(ok: bool) -> str:
    return "ok" if ok else "FAIL"


def report(run: SoakRun, workers: int, reach: int) -> bool:
    f = run.facts
    deaths = len(run.died)
    bound = deaths * 2 * CONCURRENCY
    s = f.stores
    rows = [
        ("pages lost (reachable, never fetched)", f"{len(f.lost)} of {reach}", not f.lost),
        ("duplicates after deaths (bound 2x8 per death)", f"{f.duplicates.after_kill} / {bound}",
         f.duplicates.after_kill <= bound),
        ("duplicates by live workers", str(f.duplicates.live), f.duplicates.live == 0),
        ("relevant pages (last judgement) not indexed",
         f"{len(s.relevant_missing)} of {s.relevant}", not s.relevant_missing),
        ("indexed pages without a change record", f"{len(s.unrecorded)} of {s.indexed}",
         not s.unrecorded),
        ("indexed pages whose change-store version != index",
         f"{len(s.version_mismatch)} of {s.indexed}", not s.version_mismatch),
        ("PRAGMA integrity_check", s.integrity, s.integrity == "ok"),
        ("pages quarantined (all innocent)", str(f.quarantined), f.quarantined == 0),
        ("frontier left queued / in flight", f"{f.queued} / {f.in_flight}",
         f.queued == 0 and f.in_flight == 0),
        ("every worker ended by itself (exit 0)", str(run.finished), run.finished),
        ("tracebacks / signal-handler errors", str(len(run.errors)), not run.errors),
    ]  # fmt: skip
    print(f"\n{'check':52} {'value':>16}  verdict")
    for name, value, ok in rows:
        print(f"{name:52} {value:>16}  {verdict(ok)}")
    print(f"\nfetched {len(f.fetched)} distinct pages ({sum(1 for _ in f.fetched)}), "
          f"duplicates {f.duplicates.total}, lease re-deliveries counted in Redis "
          f"{f.redelivered}, deaths {deaths}, incarnations {len(run.incarnations)}, "
          f"took {run.took:.0f}s")  # fmt: skip
    for slot in range(1, workers + 1):
        print(f"peak RSS w{slot}: {run.peak_rss_mb(slot):.0f} MB")
    if f.duplicates.live_examples:
        print("live-worker duplicates (first 10):")
        for url, seq in f.duplicates.live_examples:
            print(f"  {url}: {seq}")
    if f.lost:
        print(f"lost (first 20): {f.lost[:20]}")
    if s.version_mismatch:
        print(f"version mismatches (first 5): {s.version_mismatch[:5]}")
    for line in run.errors[:10]:
        print(f"error: {line[:300]}")
    return all(ok for _, _, ok in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--minutes", type=float, default=20.0, help="span of the fault schedule")
    ap.add_argument("--seed", type=int, default=1, help="the driver's RNG")
    ap.add_argument("--pages", type=int, default=20_000, help="articles of the synthetic web")
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--lease", type=float, default=15.0, help="FOCUSCRAWL_REDIS_LEASE (s)")
    ap.add_argument("--reshard-slots", type=int, default=1000)
    ap.add_argument("--events", default=",".join(EVENTS), help="fault kinds to inject")
    ap.add_argument("--disk-mb", type=int, default=1024, help="size of the data dir's tmpfs")
    ap.add_argument(
        "--latency-ms",
        type=int,
        default=0,
        help="every response of the test web this late (stretches the crawl over the schedule)",
    )
    ap.add_argument("--full-seconds", type=float, default=15.0, help="how long the disk is full")
    ap.add_argument("--keep", default="", help="keep the run's folder here (logs)")
    ap.add_argument("--plot", default="", help="write the run's plot (PNG) here")
    ap.add_argument("--plot-from", default="", help="only plot a kept run's folder (to --plot)")
    args = ap.parse_args()
    if args.plot_from:
        plot(Path(args.plot_from), Path(args.plot or "chaos.png"))
        return
    if args.keep and Path(args.keep).exists() and any(Path(args.keep).iterdir()):
        # the crawl logs are appended to: an earlier run's lines would count as this run's
        sys.exit(f"--keep {args.keep}: the folder is not empty (an earlier run?); give a new one")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    with TestWebProcess(corpus="synthetic", pages=args.pages, latency_ms=args.latency_ms) as web:
        t0 = time.monotonic()
        reach = reachable_urls(web, args.pages)
        print(f"synthetic web: {args.pages} articles on {len(web.hosts)} hosts; "
              f"{len(reach)} reachable from the seeds ({time.monotonic() - t0:.1f}s to compute)")  # fmt: skip
        work = Path(args.keep or tempfile.mkdtemp(prefix="fc-chaos-"))
        work.mkdir(parents=True, exist_ok=True)
        soak = Soak(
            work, web, reach, minutes=args.minutes, seed=args.seed, workers=args.workers,
            lease=args.lease, reshard_slots=args.reshard_slots,
            kinds=tuple(args.events.split(",")), disk_mb=args.disk_mb,
            full_seconds=args.full_seconds,
        )  # fmt: skip
        run = soak.run()
    save_events(run, work)
    if args.plot:
        plot(work, Path(args.plot))
    print(f"\nseed {args.seed}, schedule {args.minutes:g} min, data dir on {run.disk}, "
          f"work folder {work}")  # fmt: skip
    print(f"{'at (s)':>8} {'done (s)':>8}  event")
    for e in run.events:
        print(f"{e.at:8.1f} {e.done_at:8.1f}  {e.kind:12} {e.note}")
    ok = report(run, args.workers, len(reach))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("VERDICT:", "all checks ok" if ok else "some checks FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
