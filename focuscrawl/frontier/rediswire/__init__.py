"""The frontier's Redis wire layer: what both Redis frontiers say to a Redis, and how.

* :mod:`~focuscrawl.frontier.rediswire.scripts`: the Lua scripts (``lua/*.lua``) and their SHA1s.
* :mod:`~focuscrawl.frontier.rediswire.replies`: the scripts' replies, named and decoded.
* :mod:`~focuscrawl.frontier.rediswire.pipeline`: one connection, batches sent ahead or queued,
  retries, ``NOSCRIPT`` reloads, OOM holds, cluster failover.
* :mod:`~focuscrawl.frontier.rediswire.shard`: one prefix's queue over a pipeline (pushes, pops,
  the pop sent ahead, leases, requeue): once for one Redis, once per hash tag on a cluster.
* :mod:`~focuscrawl.frontier.rediswire.layout`: de-dup bucket and Bloom filter sizes.
"""

from __future__ import annotations

from focuscrawl.frontier.rediswire.pipeline import SOCKET_TIMEOUTS, Batch, Command, Pipeline
from focuscrawl.frontier.rediswire.replies import (
    PopKind,
    PopReply,
    RequeueReply,
    push_result,
    push_results,
)
from focuscrawl.frontier.rediswire.scripts import SCRIPTS, Script
from focuscrawl.frontier.rediswire.shard import PUSH_CHUNK, PopAhead, PushItem, QueueShard

__all__ = [
    "PUSH_CHUNK",
    "SCRIPTS",
    "SOCKET_TIMEOUTS",
    "Batch",
    "Command",
    "Pipeline",
    "PopAhead",
    "PopKind",
    "PopReply",
    "PushItem",
    "QueueShard",
    "RequeueReply",
    "Script",
    "push_result",
    "push_results",
]
