"""Which words mark relevant pages, learned from the bodies of the fetched pages, applied to
a link's anchor and URL words.

On a web whose anchors are names (Wikispeedia: "Bald Eagle", "Sutton Hoo") an anchor has no
topic word and each name occurs once as an anchor, so a link classifier that learns from
anchors learns little. The *bodies* of the fetched pages hold those names many times: the
relevant bird pages mention eagle, owl, heron far more often than the irrelevant pages do.

Each fetched page adds its distinct words once (document presence), with the crawl's own
relevance judgement. A word's evidence is the log-odds of P(relevant | a page contains it),
estimated with a Beta prior of strength ``m`` centred on the share of relevant pages π, against
logit(π): 0 for a word never seen, positive for words found mostly in relevant pages. A link's
lift is ``sigmoid(logit(π) + clip(Σ evidence)) − π`` over its distinct words: centred, so that
a link with unknown words neither gains nor loses against links queued before the model knew
anything. Pure functions and dicts, no Scrapy import.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from urllib.parse import urlsplit

from focuscrawl.strategy.classcounts import count_into, move_into
from focuscrawl.strategy.linklearner import path_words
from focuscrawl.text import fast_tokens


class BodyWordModel:
    def __init__(
        self,
        m: float = 2.0,
        clip: float = 4.0,
        min_examples: int = 5,
        every: int = 25,
        max_words: int = 0,
        max_vocab: int = 200_000,
    ) -> None:
        """``m``: strength of the prior (in pages); ``clip``: bound of the summed evidence;
        ``every``: pages between refreshes of π and the per-word evidence; ``max_words`` > 0:
        a page adds only its ``max_words`` most frequent words, what it is about rather than
        every name it mentions once (0: all its distinct words); ``max_vocab``: past this many
        words, a refresh forgets the words seen on one page only (a long crawl's memory stays
        bounded)."""
        self.m = m
        self.clip = clip
        self.min_examples = min_examples
        self.every = every
        self.max_words = max_words
        self.max_vocab = max_vocab
        self.docs = [0, 0]  # irrelevant, relevant pages learned from
        self.counts: dict[str, list[int]] = {}
        self.prior = 0.0
        self._logit_prior = 0.0
        self._evidence: dict[str, float] = {}  # per word, since the last refresh
        self._lifts: dict[tuple[str, ...], float] = {}  # per link's words, since the last refresh
        self._since = 0
        self.ready = False

    def learn(self, words: Iterable[str], relevant: bool, chosen: bool = False) -> Iterable[str]:
        """One fetched page: its words (repeats are counted once) and its judgement.
        ``chosen``: ``words`` are already the page's distinct top words (the cosine model's
        :meth:`~focuscrawl.relevance.cosine.CosineModel.top_terms`): taken as they are.
        Returns the words counted (what :meth:`relabel` takes to move the page)."""
        c = 1 if relevant else 0
        self.docs[c] += 1
        if chosen:
            distinct = words
        elif self.max_words > 0:
            freq: dict[str, int] = {}
            for w in words:
                freq[w] = freq.get(w, 0) + 1
            distinct: Iterable[str] = sorted(freq, key=freq.__getitem__, reverse=True)[
                : self.max_words
            ]
        else:
            distinct = set(words)
        count_into(self.counts, distinct, c)
        self._since += 1
        if self._since >= self.every or (not self.ready and self._trainable()):
            self.refresh()
        return distinct

    def relabel(self, words: Iterable[str], relevant: bool) -> None:
        """A page learned with the other judgement (``words``: what :meth:`learn` returned)
        is moved to ``relevant``'s side: the user labelled it, or a retrained page model
        judges it otherwise. Taken at the next refresh, as a page learned."""
        if not move_into(self.counts, self.docs, words, 1 if relevant else 0):
            return
        self._since += 1
        if self._since >= self.every:
            self.refresh()

    def _trainable(self) -> bool:
        return min(self.docs) >= self.min_examples

    def refresh(self) -> None:
        """Take the counts so far: a new π, and the per-word evidence recomputed on demand."""
        self._since = 0
        if len(self.counts) > self.max_vocab:
            self.counts = {w: c for w, c in self.counts.items() if c[0] + c[1] > 1}
        if not self._trainable():
            return
        n0, n1 = self.docs
        self.prior = n1 / (n0 + n1)
        self._logit_prior = math.log(n1 / n0)
        self._evidence = {}
        self._lifts = {}
        self.ready = True

    def evidence(self, word: str) -> float:
        """logit P(relevant | a page contains ``word``) − logit π (0 for an unknown word)."""
        e = self._evidence.get(word)
        if e is None:
            # a known word's, as of its first look-up since the last refresh; an unknown word
            # is looked up again (it may be learned before the next refresh)
            pair = self.counts.get(word)
            if pair is None:
                return 0.0
            n0, n1 = pair
            pm = self.m * self.prior
            e = math.log((n1 + pm) / (n0 + self.m - pm)) - self._logit_prior
            self._evidence[word] = e
        return e

    def lift(self, words: Iterable[str]) -> float:
        """P(relevant | the link's words) − π; 0 while untrained or for unknown words."""
        if not self.ready:
            return 0.0
        z = 0.0
        for w in words:
            z += self.evidence(w)
        if z == 0.0:
            return 0.0
        z = self._logit_prior + max(-self.clip, min(self.clip, z))
        p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
        return p - self.prior

    def lift_of(self, words: tuple[str, ...]) -> float:
        """:meth:`lift`, memoised per link's words until the next refresh when all of them are
        known (navigation and template links repeat on every page of a host); the same value."""
        lifts = self._lifts
        v = lifts.get(words)
        if v is None:
            v = self.lift(words)
            evidence = self._evidence
            if all(w in evidence for w in words):  # (a link with an unknown word: not kept)
                if len(lifts) > 100_000:
                    lifts.clear()
                lifts[words] = v
        return v


def link_words(anchor: str, url: str) -> tuple[str, ...]:
    """The distinct words of a link's anchor and URL path, in order."""
    words = fast_tokens(anchor) + path_words(urlsplit(url).path)
    return tuple(dict.fromkeys(words))
