"""Relevance models: topic profile, TF-IDF cosine, SVM, PU learning, ensembles (no Scrapy)."""

from focuscrawl.relevance.base import PageScorer
from focuscrawl.relevance.cosine import CosineModel

__all__ = ["CosineModel", "PageScorer"]
