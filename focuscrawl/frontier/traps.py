"""The scheduler's trap caps: URLs that de-duplication cannot stop, in bounded memory (no Scrapy).

* **Query variants.** One host+path with ever new query strings: a search form (``?q=1``,
  ``?q=2``, …), a session id the normaliser does not know, a calendar (``?month=2024-01``). At
  most ``max_query_variants`` distinct query strings are admitted per host+path; the rest are
  rejected (``focuscrawl/frontier/rejected/query_variants``). A query string is counted by a
  32-bit hash that does not depend on the order of its parameters (nor does the request
  fingerprint), 4 bytes in a byte string per path; a host keeps its ``PATHS_PER_HOST`` most recently used paths and all
  hosts together ``MAX_PATHS``, so the memory is bounded (about 11 MB at the defaults, however
  hostile the web) and a forgotten path starts counting again.
* **Pages per pattern** (``FOCUSCRAWL_MAX_PAGES_PER_PATTERN``, off by default): URLs with
  digit runs folded (:func:`~focuscrawl.frontier.urls.url_pattern`) counted as they are added;
  the ``MAX_PATTERNS`` most recently used patterns are kept.

The counts are per process (per worker in a cluster) and start over on a resume: a bound on the
damage, not an exact quota.
"""

from __future__ import annotations

from collections import OrderedDict

from focuscrawl.frontier.urls import url_pattern

PATHS_PER_HOST = 1_000
MAX_PATHS = 20_000
MAX_PATTERNS = 100_000


def query_key(query: str) -> bytes:
    """A 32-bit hash of a query string (4 bytes), independent of the order of its parameters."""
    h = sum(map(hash, query.split("&"))) if "&" in query else hash(query)
    return (h & 0xFFFFFFFF).to_bytes(4, "little")


class TrapCaps:
    def __init__(
        self,
        max_query_variants: int = 0,
        max_pages_per_pattern: int = 0,
        paths_per_host: int = PATHS_PER_HOST,
        max_paths: int = MAX_PATHS,
        max_patterns: int = MAX_PATTERNS,
    ) -> None:
        self.max_query_variants = max_query_variants
        self.max_pages_per_pattern = max_pages_per_pattern
        self.paths_per_host = paths_per_host
        self.max_paths = max_paths
        self.max_patterns = max_patterns
        # host → (hash of path → its query strings' keys, 4 bytes each), both in least recently
        # used order
        self._hosts: OrderedDict[str, OrderedDict[int, bytearray]] = OrderedDict()
        self._paths = 0
        self._patterns: OrderedDict[str, int] = OrderedDict()

    def reject(self, url: str, counted: bool = True) -> str | None:
        """Why ``url`` is rejected (``query_variants``, ``pattern_cap``), or None. ``counted``
        False (a ``dont_filter`` request: a redirect, a retry, a recrawl) skips the query cap."""
        if counted and self.max_query_variants and "?" in url and not self._admit_query(url):
            return "query_variants"
        if self.max_pages_per_pattern:
            count = self._patterns.get(url_pattern(url), 0)
            if count >= self.max_pages_per_pattern:
                return "pattern_cap"
        return None

    def added(self, url: str) -> None:
        """``url`` was added to the frontier: count it in its pattern."""
        if not self.max_pages_per_pattern:
            return
        pattern = url_pattern(url)
        patterns = self._patterns
        patterns[pattern] = patterns.pop(pattern, 0) + 1  # now the most recently used
        if len(patterns) > self.max_patterns:
            patterns.popitem(last=False)

    @property
    def tracked_paths(self) -> int:
        return self._paths

    def _admit_query(self, url: str) -> bool:
        # split by hand: urlsplit of a new URL costs ~10 µs here (its cache never hits)
        base, _, query = url.partition("?")
        query = query.partition("#")[0]
        if not query:
            return True
        start = base.find("//") + 2
        end = base.find("/", start)
        host = base[start:end] if end >= 0 else base[start:]  # host[:port], as written
        paths = self._hosts.get(host)
        if paths is None:
            paths = self._hosts[host] = OrderedDict()
        else:
            self._hosts.move_to_end(host)
        path = hash(base)
        seen = paths.get(path)
        if seen is None:
            if len(paths) >= self.paths_per_host:
                paths.popitem(last=False)
                self._paths -= 1
            seen = paths[path] = bytearray()
            self._paths += 1
            while self._paths > self.max_paths:  # forget the least recently used host
                _, forgotten = self._hosts.popitem(last=False)
                self._paths -= len(forgotten)
        else:
            paths.move_to_end(path)
        key = query_key(query)
        # a substring search: a match across two keys (about n/2**30) only admits one URL more
        if key in seen:
            return True
        if len(seen) >= 4 * self.max_query_variants:
            return False
        seen += key
        return True
