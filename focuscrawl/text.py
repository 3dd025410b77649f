"""Tokenisation shared by relevance scoring, change detection and the index (no Scrapy)."""

from __future__ import annotations

import re
import string

_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*\w)?", re.UNICODE)

# A small English stop list: frequent function words that carry no topic.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours yourself yourselves may might
    must shall one two also however many much among upon within without""".split()  # noqa: SIM905
)


def tokens(text: str, *, stop: frozenset[str] = STOPWORDS) -> list[str]:
    """Lower-cased word tokens of ``text`` without stop words or one-letter words."""
    # findall without groups returns strings: no Match objects in this hot loop
    return [w for w in _WORD.findall(text.lower()) if w not in stop and len(w) > 1]


WORD_EDGES = string.punctuation + string.digits + "\u2018\u2019\u201c\u201d\u2013\u2014\u00ab\u00bb"


def fast_tokens(text: str) -> list[str]:
    """Lower-cased words split on white space, punctuation stripped from their ends.

    About twice as fast as a Unicode regex on long pages (a crawl scores every page); stop
    words, one-letter words and tokens not starting with a letter are dropped.
    """
    out = []
    for raw in text.lower().split():
        w = raw.strip(WORD_EDGES)
        if len(w) > 1 and w[0].isalpha() and w not in STOPWORDS:
            out.append(w)
    return out
