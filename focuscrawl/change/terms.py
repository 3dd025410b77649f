"""Terms of a page version for change detection: words AND numbers, volatile tokens masked.

Change detection needs numbers (a fund's value, a price, a score), which the topic tokeniser
(:func:`focuscrawl.text.tokens`) drops, and it must not see tokens that change on every fetch
without any change of content: times of day, ISO timestamps, epoch seconds, hex or base64-ish
ids, session tokens. Those are replaced by a placeholder (``<time>``, ``<id>``, …), so that a page
that differs only through them has the same document index as before.

The rules are data (:data:`VOLATILE_RULES`): an ordered list of (placeholder, regex), applied to
each term holding a digit. Dates are NOT masked by default: on real pages a new date usually
comes with new content, and "as of March 31" changing to "as of April 30" is news; pass
``mask_dates=True`` to treat a bare date stamp as noise.
"""

from __future__ import annotations

import re
import string
from collections import Counter

#: (placeholder, pattern) tried in order on each term that holds a digit (terms are
#: lower-cased first). Rules are data: extend the list, don't branch in the code.
VOLATILE_RULES: list[tuple[str, str]] = [
    # 2025-04-25t00:20:01z, 2025-04-25t00:20:01.123+02:00
    ("<datetime>", r"\d{4}-\d{2}-\d{2}t\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?"),
    # 12:34, 12:34:56.789
    ("<time>", r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"),
    # uuids
    ("<id>", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    # terms of 8+ characters mixing letters and 3+ digits (ids, nonces, hashes, session keys);
    # "covid-19" or "fy2025" stay words
    ("<id>", r"(?=(?:[a-z_-]*\d){3})(?=[\d_-]*[a-z])[a-z\d_-]{8,}"),
    # a bare run of 9+ digits: epoch seconds/millis, counters, cache busters
    ("<num>", r"\d{9,}"),
]

#: Dates, masked in the text before tokenising, only when asked (``mask_dates=True``).
DATE_RULES: list[tuple[str, str]] = [
    (
        "<date>",
        r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
        r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
        r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+\d{1,2}(?:st|nd|rd|th)?"
        r"(?:,?\s+\d{4})?\b",
    ),
    ("<date>", r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"),
]

# Terms are whitespace-separated tokens with punctuation stripped from their edges, so inner
# , . : / + ' - stay (26,125,000,000  4.55%  12:30:01  year-end  don't). Splitting on whitespace
# runs in C; a tokenising regex was the hot loop of the simhash (bench/bench_simhash.py).
EDGE = "".join(c for c in string.punctuation if c not in "$%<>") + "“”‘’«»–—…·•"
_VOLATILE = [(ph, re.compile(rx)) for ph, rx in VOLATILE_RULES]
_ANY_VOLATILE = re.compile("|".join(f"(?:{rx})" for _, rx in VOLATILE_RULES))
_DATES = [(ph, re.compile(rx, re.IGNORECASE)) for ph, rx in DATE_RULES]


# every volatile rule needs 3+ digits: a cheap test that skips the costly one for most terms
_THREE_DIGITS = re.compile(r"(?:\D*\d){3}")


def _mask_term(term: str) -> str:
    if not _THREE_DIGITS.match(term) or not _ANY_VOLATILE.search(term):
        return term
    for placeholder, rx in _VOLATILE:
        if rx.fullmatch(term):
            return placeholder
    return _ANY_VOLATILE.sub("<v>", term)  # a volatile part inside a longer term


def _lowered(text: str, mask_dates: bool) -> str:
    text = text.lower()
    if mask_dates:
        for placeholder, rx in _DATES:
            text = rx.sub(placeholder, text)
    return text


def term_of(token: str) -> str:
    """The term of one lower-cased whitespace-separated token ("" when it is only
    punctuation): its edges stripped, a volatile token masked, as :func:`terms` has it."""
    term = token.strip(EDGE)
    if not term or term.isalpha():
        return term
    return _mask_term(term)


def terms(text: str, *, mask_dates: bool = False) -> list[str]:
    """Lower-cased terms of ``text`` (words and numbers) in order, volatile tokens masked."""
    found = (t if t.isalpha() else term_of(t) for t in _lowered(text, mask_dates).split())
    return [t for t in found if t]


def document_index(texts: list[str], *, mask_dates: bool = False) -> dict[str, int]:
    """Term frequencies over ``texts`` (the text blocks of a page): the "document index"."""
    raw: Counter[str] = Counter()
    for text in texts:
        raw.update(_lowered(text, mask_dates).split())
    out = {t: n for t, n in raw.items() if t.isalpha()}
    for token, n in raw.items():  # normalise the rest once per distinct token
        if not token.isalpha():
            term = term_of(token)
            if term:
                out[term] = out.get(term, 0) + n
    return out


def index_distance(old: dict[str, int], new: dict[str, int]) -> int:
    """Term occurrences added plus removed between two document indexes (L1 distance)."""
    keys = old.keys() | new.keys()
    return sum(abs(old.get(k, 0) - new.get(k, 0)) for k in keys)
