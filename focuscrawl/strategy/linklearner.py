"""An online link classifier in the style of ACHE's: which links lead to relevant pages.

Each fetched page teaches it one example: the features of the link that led to the page
(its anchor words, the words of its URL path, its host) and whether the crawl judged the page
relevant. It is a multinomial naive Bayes over those features, updated per page (a few dict
increments) and turned into per-feature log-odds weights every ``every`` pages, so that scoring
a link is a handful of dict look-ups. Until it has seen ``min_examples`` relevant and
``min_examples`` irrelevant pages it abstains (``None``).

Pure functions and plain dicts: no Scrapy import, nothing persisted (a resumed crawl starts
learning again).
"""

from __future__ import annotations

import math
import re
from urllib.parse import urlsplit

from focuscrawl.strategy.classcounts import count_into, move_into
from focuscrawl.text import fast_tokens

Features = list[str]

_NOT_ALNUM = re.compile(r"[\W_]+")  # \W is "not str.isalnum() and not _"


def path_words(path: str) -> list[str]:
    """The words of a URL path, split at every character that is not a letter or a digit."""
    return fast_tokens(_NOT_ALNUM.sub(" ", path))


def link_features(anchor: str, url: str, context: str = "", kinds: str = "auh") -> Features:
    """The anchor's words (``a:``), the URL path's words (``u:``), the host (``h:``) and the
    link context's words (``c:``), as many of them as ``kinds`` names."""
    feats = [f"a:{w}" for w in fast_tokens(anchor)] if "a" in kinds else []
    if "u" in kinds or "h" in kinds:
        parts = urlsplit(url)
        if "u" in kinds:
            feats += [f"u:{w}" for w in path_words(parts.path)]
        if "h" in kinds and parts.hostname:
            feats.append(f"h:{parts.hostname}")
    if "c" in kinds and context:
        feats += [f"c:{w}" for w in dict.fromkeys(fast_tokens(context))]
    return feats


class LinkLearner:
    def __init__(self, every: int = 25, min_examples: int = 5, alpha: float = 1.0) -> None:
        self.every = every
        self.min_examples = min_examples
        self.alpha = alpha
        self.docs = [0, 0]  # irrelevant, relevant pages seen
        self.tokens = [0, 0]  # feature occurrences per class
        self.counts: dict[str, list[int]] = {}
        self.weights: dict[str, float] = {}
        self.bias = 0.0
        self.prior = 0.0  # share of relevant pages among those learned from, at the last fit
        self.ready = False
        self._since = 0

    def learn(self, features: Features, relevant: bool) -> None:
        """One fetched page: the features of the link that led to it, and its judgement."""
        c = 1 if relevant else 0
        self.docs[c] += 1
        count_into(self.counts, features, c)
        self.tokens[c] += len(features)
        self._since += 1
        if self._since >= self.every or (not self.ready and self._trainable()):
            self.fit()

    def relabel(self, features: Features, relevant: bool) -> None:
        """A link learned with the other outcome is moved to ``relevant``'s side (the page it
        led to was labelled by the user, or judged otherwise by a retrained page model)."""
        c = 1 if relevant else 0
        if not move_into(self.counts, self.docs, features, c):
            return
        self.tokens[1 - c] = max(0, self.tokens[1 - c] - len(features))
        self.tokens[c] += len(features)
        self._since += 1
        if self._since >= self.every:
            self.fit()

    def _trainable(self) -> bool:
        return min(self.docs) >= self.min_examples

    def fit(self) -> None:
        """Rebuild the log-odds weights from the counts (cheap: one pass over the features)."""
        self._since = 0
        if not self._trainable():
            return
        a = self.alpha
        vocab = len(self.counts) + 1
        log_n0 = math.log(self.tokens[0] + a * vocab)
        log_n1 = math.log(self.tokens[1] + a * vocab)
        self.weights = {
            f: math.log(n1 + a) - log_n1 - math.log(n0 + a) + log_n0
            for f, (n0, n1) in self.counts.items()
        }
        self.bias = math.log(self.docs[1] / self.docs[0])
        self.prior = self.docs[1] / (self.docs[0] + self.docs[1])
        self.ready = True

    def prob(self, features: Features) -> float | None:
        """P(the link leads to a relevant page), or None while the learner is not trained."""
        if not self.ready:
            return None
        weights = self.weights
        z = self.bias
        for f in features:
            z += weights.get(f, 0.0)
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)

    def lift(self, features: Features) -> float:
        """``prob − prior``: how much more (or less) likely than an unknown link this link is
        to lead to a relevant page; 0 while untrained. Centred, so that links scored after
        training do not all gain over the links queued before it."""
        p = self.prob(features)
        return 0.0 if p is None else p - self.prior
