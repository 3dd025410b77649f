"""What the crawler asks of a relevance model."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from focuscrawl.blocks.model import Page


@runtime_checkable
class PageScorer(Protocol):
    """Scores pages and short texts (anchors, link contexts, blocks) in [0, 1]."""

    threshold: float

    def score_page(self, page: Page) -> float: ...

    def score_text(self, text: str) -> float: ...

    def observe(self, page: Page, relevance: float) -> None:
        """Called once per fetched page: models that learn during a crawl update here."""
        ...
