"""The reference crawlers: the oracle and breadth-first, over the graph the crawler sees.

No model is involved. A :class:`LinkGraph` fetches each page from a :class:`Site` and takes its
links as the crawl does: :func:`focuscrawl.blocks.partition`'s links (at the partition
middleware's defaults), ``nofollow`` links dropped, every URL cleaned by the crawl's
:func:`~focuscrawl.frontier.urls.clean_url` at the default trap limits; a link leaves the graph
when the crawl could not fetch it either: a host the site does not serve (the crawl may reach
only the test web's hosts), a path the host's ``robots.txt`` disallows (``ROBOTSTXT_OBEY``, read
with Protego as Scrapy does), or a query string past the scheduler's per-path cap
(``FOCUSCRAWL_MAX_QUERY_VARIANTS``). A redirect is followed within the fetch, as Scrapy's
redirect middleware does (the 3xx response never reaches the crawl log), up to
``REDIRECT_MAX_TIMES``; a redirect to a page fetched already is dropped.

From the same seeds (fetched first, in their order):

- ``oracle``: a priority queue where the links to relevant pages (category members, by the true
  labels) come first, first found first among them; every other link after them, first found
  first. It knows the labels of the pages it has not fetched: an upper reference, not a bound
  (a crawl that tunnels through an irrelevant page it could not know to be useful may find a
  target sooner).
- ``bfs``: first found first (depth order).

Both return a fetch log that :func:`focuseval.metrics.evaluate` scores. The graph caches every
page's cleaned links, so several references (and topics) over one site cost one partition per
page: seconds per topic.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from protego import Protego

from focuscrawl.blocks import partition
from focuscrawl.defaults import DEFAULTS
from focuscrawl.frontier.traps import TrapCaps
from focuscrawl.frontier.urls import TrapLimits, clean_url
from focuseval.metrics import CrawlMetrics, CrawlRecord, Labels, evaluate, normalize_url
from focuseval.site import Site

REFERENCES = ("oracle", "bfs")
REDIRECT_MAX_TIMES = 10  # Scrapy's setting, as the crawl's add-on sets it
USER_AGENT = "Scrapy"


@dataclass(slots=True)
class Fetched:
    """One fetch as the crawl log records it: the final URL (after redirects), its status and
    its cleaned, followable links in document order (no repeats)."""

    url: str
    status: int
    links: tuple[str, ...]


class LinkGraph:
    """The crawler's view of ``site``: fetch results and cleaned links, cached per URL."""

    def __init__(self, site: Site, limits: TrapLimits | None = None) -> None:
        self.site = site
        self.limits = limits or TrapLimits(
            max_length=DEFAULTS["FOCUSCRAWL_MAX_URL_LENGTH"],
            max_path_depth=DEFAULTS["FOCUSCRAWL_MAX_PATH_DEPTH"],
            max_repeated_segments=DEFAULTS["FOCUSCRAWL_MAX_REPEATED_SEGMENTS"],
        )
        self.hosts = set(site.hosts)
        self._robots: dict[str, Protego] = {}
        self._pages: dict[str, Fetched | None] = {}

    def allowed(self, url: str) -> bool:
        """Whether the crawl may fetch ``url`` (a cleaned URL): on a served host, not disallowed."""
        host = urlsplit(url).hostname or ""
        if host not in self.hosts:
            return False
        robots = self._robots.get(host)
        if robots is None:
            robots = self._robots[host] = Protego.parse(self.site.robots(host))
        return robots.can_fetch(url, USER_AGENT)

    def fetch(self, url: str) -> Fetched | None:
        """The fetch of ``url``; ``None`` when it gives no logged response (a redirect loop, or
        one that leaves what the crawl may fetch)."""
        if url not in self._pages:
            self._pages[url] = self._fetch(url)
        return self._pages[url]

    def _fetch(self, url: str) -> Fetched | None:
        for _ in range(REDIRECT_MAX_TIMES + 1):
            parts = urlsplit(url)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            res = self.site.get(parts.hostname or "", path)
            if res is None:
                return Fetched(url, 404, ())
            location = res.headers.get("Location") if 300 <= res.status < 400 else None
            if location is None:
                break
            target, reason = clean_url(urljoin(url, location), self.limits)
            if reason is not None or not self.allowed(target):
                return None
            url = target
        else:
            return None  # too many redirects: Scrapy gives up, nothing reaches the log
        if res.status != 200 or "html" not in res.content_type:
            return Fetched(url, res.status, ())
        page = partition(res.body, url)
        if page.error:
            return Fetched(url, res.status, ())
        links: dict[str, None] = {}
        for link in page.links:
            if link.nofollow:
                continue
            target, reason = clean_url(link.url, self.limits)
            if reason is None and target not in links and self.allowed(target):
                links[target] = None
        return Fetched(url, res.status, tuple(links))


def reference_crawl(
    graph: LinkGraph, seeds: Iterable[str], labels: Labels, pages: int, order: str = "oracle"
) -> list[CrawlRecord]:
    """Crawl ``graph`` from ``seeds`` for ``pages`` fetches in the ``order`` of
    :data:`REFERENCES`; returns the fetch log."""
    if order not in REFERENCES:
        raise ValueError(f"unknown reference {order!r}; one of {', '.join(REFERENCES)}")
    relevant = labels.relevant
    found = itertools.count()
    queue: list[tuple[int, int, str]] = []  # (class, discovery order, url)
    seen: set[str] = set()
    caps = TrapCaps(DEFAULTS["FOCUSCRAWL_MAX_QUERY_VARIANTS"])

    def push(url: str, klass: int) -> None:
        if url in seen or caps.reject(url) is not None:
            return
        seen.add(url)
        heapq.heappush(queue, (klass, next(found), url))

    def klass(url: str) -> int:
        return 1 if order == "bfs" or normalize_url(url) in relevant else 2

    for seed in seeds:
        cleaned, reason = clean_url(seed, graph.limits)
        if reason is None:
            push(cleaned, 0)
    log: list[CrawlRecord] = []
    fetched: set[str] = set()
    while queue and len(log) < pages:
        _, _, url = heapq.heappop(queue)
        result = graph.fetch(url)
        if result is None or result.url in fetched:
            continue  # no response logged; or a redirect to a page fetched already
        fetched.add(result.url)
        seen.add(result.url)
        log.append(CrawlRecord(result.url, result.status))
        for target in result.links:
            push(target, klass(target))
    return log


def reference_metrics(
    graph: LinkGraph, seeds: Iterable[str], labels: Labels, pages: int
) -> dict[str, CrawlMetrics]:
    """``{"oracle": …, "bfs": …}``: both references scored like a crawl log."""
    seeds = list(seeds)
    return {
        order: evaluate(reference_crawl(graph, seeds, labels, pages, order), labels)
        for order in REFERENCES
    }
