"""A slice of the chaos soak (``bench/bench_chaos.py``, issue 29), marked ``slow``: three real
``topical_redis`` workers sharing one data dir crawl a small synthetic web over a local 3-master
Redis Cluster with a replica each and AOF, while the driver SIGKILLs a worker (restarted at
once), SIGKILLs a master (its replica promoted, the old one back as a replica) and moves 1,000
slots between two masters live (``redis-cli --cluster reshard``). Nothing is lost: every page
reachable from the seeds is fetched, every page relevant at its last judgement is indexed with
the change store's version, the index passes ``PRAGMA integrity_check``, nothing is quarantined,
and the frontier ends empty with every worker exiting 0 by itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from focuseval.synthetic import SyntheticWeb
from focuseval.testweb import TestWebProcess

from tests.chaos_checks import reachable
from tests.chaos_soak import CONCURRENCY, Soak

PAGES = 1000


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="needs redis-cli (redis-tools)")
def test_worker_kill_master_kill_and_live_reshard_lose_nothing(tmp_path: Path) -> None:
    with TestWebProcess(corpus="synthetic", pages=PAGES) as web:
        graph = SyntheticWeb(hosts=web.hosts, port=web.port, seed=7, n_pages=PAGES)
        reach = reachable(graph.pages, web.seeds["birds"], graph.url)
        soak = Soak(
            tmp_path,
            web,
            reach,
            minutes=0.5,
            seed=3,
            kinds=("kill-worker", "kill-master", "reshard"),
            timeout=240,
        )
        run = soak.run()
    logs = "\n".join(p.read_text()[-3000:] for p in sorted((tmp_path / "logs").glob("*.log")))
    notes = [(e.kind, e.note) for e in run.events]
    assert all(e.done_at >= 0 and "FAILED" not in e.note for e in run.events), notes
    assert [e.kind for e in run.events].count("kill-worker") == 1
    f = run.facts
    assert run.finished, (notes, logs)
    assert not f.lost, (f.lost[:10], notes)
    assert f.queued == 0 and f.in_flight == 0
    assert f.duplicates.after_kill <= len(run.died) * 2 * CONCURRENCY
    s = f.stores
    assert s.integrity == "ok"
    assert s.relevant > 0 and not s.relevant_missing, s.relevant_missing[:10]
    assert not s.unrecorded and not s.version_mismatch, (s.unrecorded[:5], s.version_mismatch[:5])
    assert f.quarantined == 0
    assert not run.errors, run.errors[:5]
