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


#: The cosine model's threshold in automatic mode (``FOCUSCRAWL_RELEVANCE_THRESHOLD`` 0) until
#: the first seed page sets it (``CrawlPolicy.judge``): what the example pages fetched before
#: any seed are judged by.
UNCALIBRATED_THRESHOLD = 0.25


def load_model(
    path: str | None,
    topic: Topic,
    threshold: float,
    *,
    adapt: bool = False,
    retrain_every: int = 0,
    retrain_labels: bool = False,
    retrain_sync: bool = False,
) -> PageScorer:
    """The crawl's model: a trained model file, else cosine to the topic (adaptive when
    ``adapt``); wrapped to retrain in a worker process every ``retrain_every`` pages when > 0,
    and (``retrain_labels``) whenever the user's labels change; ``retrain_sync``: each retrain
    waited for and swapped in when asked (a reproducible crawl).

    A model file that is not a focuscrawl model raises :class:`ModelFileError` (a ``ValueError``)
    with a one-line message."""
    model: PageScorer
    if path:
        from focuscrawl.relevance.model import RelevanceModel

        model = RelevanceModel.load(path)
    elif adapt:
        from focuscrawl.relevance.adaptive import AdaptiveCosineModel

        model = AdaptiveCosineModel(topic.keywords, _example_texts(topic), threshold=threshold)
    else:
        model = CosineModel(topic.keywords, _example_texts(topic), threshold=threshold)
    if retrain_every > 0 or retrain_labels:
        from focuscrawl.relevance.online import RetrainingModel

        model = RetrainingModel(
            model, topic.keywords, every=max(0, retrain_every), sync=retrain_sync
        )
    return model
