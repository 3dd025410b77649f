"""Template links: links a site repeats on most of its pages (menus, footers, "popular" boxes).

One page alone cannot tell a site's navigation from a "see also" list that happens to be
link-dense; the site can. :class:`TemplateLinks` counts, per host, on how many of the pages seen
so far each link target appears; once a host has ``min_pages`` pages, a link whose target is on
at least ``share`` of them is marked ``template`` and ``noise`` (kept, not dropped: the frontier
decides what to do with it) and its block weight is capped at the noise weight.

State is bounded: at most ``max_hosts`` hosts (least recently seen dropped first) and
``max_links`` distinct targets counted per host (new targets past that are not counted): with
the defaults, at most a million counted targets (~150 MB) however large the crawl. A site's
template links show up on its first pages, so they are counted before the cap is reached.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from urllib.parse import urlsplit

from focuscrawl.blocks import rules
from focuscrawl.blocks.model import Page


class _Host:
    __slots__ = ("pages", "targets")

    def __init__(self) -> None:
        self.pages = 0
        self.targets: Counter[str] = Counter()


class TemplateLinks:
    """Marks the template links of a page from what earlier pages of its host showed."""

    def __init__(
        self,
        *,
        min_pages: int = rules.TEMPLATE_MIN_PAGES,
        share: float = rules.TEMPLATE_SHARE,
        max_hosts: int = 1_000,
        max_links: int = 1_000,
    ) -> None:
        if min_pages < 2 or not 0.0 < share <= 1.0:
            raise ValueError("min_pages must be >= 2 and share in (0, 1]")
        self.min_pages = min_pages
        self.share = share
        self.max_hosts = max_hosts
        self.max_links = max_links
        self._hosts: OrderedDict[str, _Host] = OrderedDict()

    def mark(self, page: Page) -> int:
        """Count ``page``'s link targets for its host, then mark its template links.

        Returns how many links were marked. A page counts each target once, however often it
        links to it.
        """
        host_name = urlsplit(page.url).netloc.lower()
        host = self._hosts.get(host_name)
        if host is None:
            host = self._hosts[host_name] = _Host()
            if len(self._hosts) > self.max_hosts:
                self._hosts.popitem(last=False)
        else:
            self._hosts.move_to_end(host_name)
        host.pages += 1
        targets = host.targets
        for url in {link.url for link in page.links}:
            if url in targets or len(targets) < self.max_links:
                targets[url] += 1
        if host.pages < self.min_pages:
            return 0
        needed = max(2.0, self.share * host.pages)  # a link seen once is never template
        marked = 0
        for link in page.links:
            if targets.get(link.url, 0) >= needed:
                link.template = True
                link.noise = True
                link.block_weight = min(link.block_weight, rules.WEIGHT_NOISE)
                marked += 1
        return marked
