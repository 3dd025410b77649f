"""The read the Redis frontier sends with its next pop, for the URL it just popped.

The frontier does not know who reads what: it is handed a :class:`RecordPrefetch` (the change
store's ``prefetch_command``, named by ``FOCUSCRAWL_FRONTIER_PREFETCH`` and wired by
:func:`focuscrawl.frontier.factory.build_frontier`), sends the command it returns in the same
``sendall`` as the pop, and hands the reply back. No frontier module imports a change store.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

#: (command to send, deliver(reply)) or None (nothing to read ahead for this URL)
Prefetched = tuple[tuple[Any, ...], Callable[[Any], None]] | None


class RecordPrefetch(Protocol):
    def __call__(self, redis_url: str, url: str, wait: Callable[[], None]) -> Prefetched:
        """A read of ``url``'s record on the Redis at ``redis_url``, or None. ``wait()`` reads
        the reply now (a reader that needs it before the frontier read it)."""
        ...


def load_prefetch(path: str) -> RecordPrefetch | None:
    """The callable named ``module:attr`` or ``module.attr`` (``""``: none)."""
    if not path:
        return None
    module, _, attr = path.replace(":", ".").rpartition(".")
    found: RecordPrefetch = getattr(importlib.import_module(module), attr)
    return found
