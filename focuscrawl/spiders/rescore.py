"""Re-scoring the frontier after the page model was retrained (from the user's labels).

The frontier only ever raises a queued URL's score. When a retrained model
(:class:`focuscrawl.relevance.online.RetrainingModel`) judges a recently fetched page more
relevant than the model that judged it (relative to each model's threshold) — or the user
labelled it on topic — the links it queued are scored again with the new judgement and sent
again: the frontier raises those whose score rose. A page now judged less relevant cannot lower
its queued links (its later pages are judged by the new model). The pages are kept in a
bounded table, the last :data:`RESCORE_PAGES` whose links the policy scored; the re-scoring
is spread, :data:`PER_PAGE` pages at a time.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from focuscrawl.blocks.model import Page
from focuscrawl.frontier.state import RequestState
from focuscrawl.relevance.judge import Judgement
from focuscrawl.relevance.online import RESCORE_PAGES

#: Pages whose links are scored again per page the crawl fetches: a retrain's re-scoring is
#: spread over the pages that follow (at once, 1,000 pages held the reactor for seconds).
PER_PAGE = 20


@dataclass(slots=True)
class Judged:
    page: Page
    state: RequestState
    relevance: float
    relevant: bool
    threshold: float


def _ratio(relevance: float, threshold: float) -> float:
    return relevance / threshold if threshold > 0 else relevance


class FrontierRescore:
    """The recently judged pages, and the links to send again after a retrain."""

    def __init__(
        self,
        links: Callable[..., Iterable[Any]],
        capacity: int = RESCORE_PAGES,
        per_page: int = PER_PAGE,
        relabel: Callable[[str, bool], bool] | None = None,
    ) -> None:
        """``relabel`` (``CrawlPolicy.relabel``): each page a retrain's scores are looked at
        for is judged again on the link side too, as the new model (or the user's label)
        says."""
        self.links = links  # CrawlPolicy.links
        self.relabel = relabel
        self.relabelled = 0  # pages whose link-side lessons the new judgement moved
        self.capacity = capacity
        self.per_page = per_page
        self.pending: list[tuple[str, float]] = []  # a retrain's scores not looked at yet
        self.threshold = 0.0  # the threshold of the model that gave them
        self.recent: OrderedDict[str, Judged] = OrderedDict()
        self.pages = 0  # pages whose links were scored again
        self.sent = 0  # links sent again

    def remember(
        self, url: str, page: Page, state: RequestState, judgement: Judgement, threshold: float
    ) -> None:
        self.recent[url] = Judged(page, state, judgement.relevance, judgement.relevant, threshold)
        self.recent.move_to_end(url)
        while len(self.recent) > self.capacity:
            self.recent.popitem(last=False)

    def rescored(
        self,
        scores: Iterable[tuple[str, float]],
        threshold: float,
        label_of: Callable[[str], bool | None],
    ) -> Iterator[tuple[str, float, RequestState]]:
        """The links of the pages the new model (``threshold`` its threshold) judges more
        relevant than before, scored with the new judgement: ``scores`` (a retrain's, empty
        between retrains) replace what was pending; at most :attr:`per_page` pages looked at
        a call."""
        scores = list(scores)
        if scores:
            self.pending, self.threshold = scores[::-1], threshold
        threshold = self.threshold
        looked = 0
        while self.pending and looked < self.per_page:
            url, relevance = self.pending.pop()
            looked += 1
            if not isinstance(relevance, float):
                continue
            label = label_of(url)
            relevant = label if label is not None else relevance >= threshold
            if self.relabel is not None and self.relabel(url, relevant):
                self.relabelled += 1
            old = self.recent.get(url)
            if old is None or label is False:
                continue
            rose = _ratio(relevance, threshold) > _ratio(old.relevance, old.threshold)
            if not relevant or (old.relevant and not rose):
                continue
            old.relevance, old.relevant, old.threshold = relevance, True, threshold
            self.pages += 1
            for target, score, child in self.links(
                old.page, url, old.state, Judgement(relevance, True)
            ):
                self.sent += 1
                yield target, score, child
