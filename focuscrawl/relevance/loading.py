"""Choose the crawl's relevance model: a trained model file, or cosine to the topic."""

from __future__ import annotations

import logging
from pathlib import Path

from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.topic import Topic

logger = logging.getLogger(__name__)


def _example_texts(topic: Topic) -> list[str]:
    from focuscrawl.blocks import partition

    texts = []
    for path in topic.example_files():
        try:
            page = partition(Path(path).read_bytes(), path.as_uri())
        except OSError as exc:
            logger.warning("Cannot read example %s: %s", path, exc)
            continue
        texts.append(f"{page.title}\n{page.main_text}")
    return texts


def load_model(path: str | None, topic: Topic, threshold: float) -> PageScorer:
    if path:
        from focuscrawl.relevance.model import RelevanceModel  # issue 4

        return RelevanceModel.load(path)
    return CosineModel(topic.keywords, _example_texts(topic), threshold=threshold)
