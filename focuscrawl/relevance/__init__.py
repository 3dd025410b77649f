"""Relevance models: topic profile, TF-IDF cosine, SVM, PU learning, ensembles (no Scrapy).

``train(positives, unlabeled=(), negatives=(), keywords=())`` → :class:`RelevanceModel`, with
``score(html, url)``, ``is_relevant(html, url)``, ``save(path)`` and ``RelevanceModel.load(path)``.
In a crawl, :class:`PageJudge` judges fetched pages with a model (seed scale, auto threshold).
"""

from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.judge import Judgement, PageJudge
from focuscrawl.relevance.model import ModelFileError, RelevanceModel
from focuscrawl.relevance.train import train

__all__ = [
    "CosineModel",
    "Judgement",
    "ModelFileError",
    "PageJudge",
    "PageScorer",
    "RelevanceModel",
    "train",
]
