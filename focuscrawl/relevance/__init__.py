"""Relevance models: topic profile, TF-IDF cosine, SVM, PU learning, ensembles (no Scrapy).

``train(positives, unlabeled=(), negatives=(), keywords=())`` → :class:`RelevanceModel`, with
``score(html, url)``, ``is_relevant(html, url)``, ``save(path)`` and ``RelevanceModel.load(path)``.
"""

from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.model import ModelFileError, RelevanceModel
from focuscrawl.relevance.train import train

__all__ = ["CosineModel", "ModelFileError", "PageScorer", "RelevanceModel", "train"]
