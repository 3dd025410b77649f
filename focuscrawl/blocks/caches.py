"""What a class or id value says (weight, unlikely, maybe-candidate), and its caches.

A leaf module (``rules`` and ``sheet`` only), shared by the pure-Python walk
(:mod:`focuscrawl.blocks.segment`) and the compiled one (``_cwalk.pyx``): both read
:data:`WORD_TABLE` and fill the same caches (cleared in place, never rebound).
"""

from __future__ import annotations

import re

from focuscrawl.blocks import rules
from focuscrawl.blocks.sheet import trie_pattern


def _word_flags() -> tuple[re.Pattern[str], dict[str, tuple[bool, bool, bool, bool]]]:
    """One alternation over every class/id word, longest first, and the lists each one hits.

    A match is looked up in a table of (negative, positive, unlikely, maybe) flags computed by
    substring tests, so "footnote" also counts as the unlikely word "foot" it contains.
    """
    lists = (rules.NEGATIVE_WORDS, rules.POSITIVE_WORDS, rules.UNLIKELY_WORDS,
             rules.MAYBE_CANDIDATE_WORDS)  # fmt: skip
    every = sorted({w for words in lists for w in words}, key=len, reverse=True)
    table = {w: tuple(any(x in w for x in words) for words in lists) for w in every}
    return re.compile(trie_pattern(every)), table  # type: ignore[return-value]


#: the class/id words' alternation, and each word's (negative, positive, unlikely, maybe) flags
WORDS_RE, WORD_TABLE = _word_flags()
#: class or id value -> (weight, unlikely, maybe), filled by :func:`feature_info`
attr_cache: dict[str, tuple[float, bool, bool]] = {}
# The caches live as long as the process: a value longer than this (a page's 5 MB class
# attribute) is not kept, so what they hold stays bounded whatever the pages are.
CACHED_VALUE_CHARS = 512


def feature_info(value: str) -> tuple[float, bool, bool]:
    """(weight, unlikely word, maybe-candidate word) of one class or id value, cached."""
    hit = attr_cache.get(value)
    if hit is not None:
        return hit
    neg = pos = unlikely = maybe = False
    for word in WORDS_RE.findall(value.lower()):
        n, p, u, m = WORD_TABLE[word]
        neg, pos, unlikely, maybe = neg or n, pos or p, unlikely or u, maybe or m
    weight = (rules.CLASS_WEIGHT if pos else 0.0) - (rules.CLASS_WEIGHT if neg else 0.0)
    info = (weight, unlikely, maybe)
    if len(attr_cache) < 100_000 and len(value) <= CACHED_VALUE_CHARS:
        attr_cache[value] = info
    return info


#: (class, id) -> (weight, unlikely, class names), filled by :func:`attr_info`
pair_cache: dict[tuple[str, str], tuple[float, bool, tuple[str, ...]]] = {}


def attr_info(cls: str, el_id: str) -> tuple[float, bool, tuple[str, ...]]:
    """(class weight, unlikely, class names) of an element's class and id, cached per pair."""
    hit = pair_cache.get((cls, el_id))
    if hit is not None:
        return hit
    weight, unlikely, maybe = feature_info(cls) if cls else (0.0, False, False)
    if el_id:
        w2, u2, m2 = feature_info(el_id)
        weight += w2
        unlikely = unlikely or u2
        maybe = maybe or m2
    info = (weight, unlikely and not maybe, tuple(cls.split()) if cls else ())
    if len(pair_cache) < 100_000 and len(cls) + len(el_id) <= CACHED_VALUE_CHARS:
        pair_cache[(cls, el_id)] = info
    return info
