"""User query text → a safe SQLite FTS5 ``MATCH`` expression (no SQL, no FTS syntax from users).

Everything a user types becomes quoted FTS5 strings built only from Unicode letters and digits,
so FTS operators (``AND``, ``NEAR``, ``:``, ``^``, ``(``, ``*`` in the middle of a word), quotes
and SQL never reach the engine as syntax. What is kept of the user's intent:

* ``"a quoted phrase"`` stays a phrase;
* ``word*`` (a trailing star on a word of at least two characters) is a prefix search;
* every other word is a term; terms are combined with ``AND`` (or ``OR`` for the fallback);
* single stop words (``the``, ``of``) are dropped when the query has other words: they match
  nearly every page, cost the most time and add nothing to the ranking (phrases keep them).

Bad input raises :class:`QueryError` with a message meant for the user.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from focuscrawl.text import STOPWORDS

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
MIN_PREFIX_CHARS = 2

_CHUNK = re.compile(r'"([^"]*)"?|([^\s"]+)')
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class QueryError(ValueError):
    """The query cannot be searched; the message says why, for the user."""


@dataclass(frozen=True, slots=True)
class Term:
    words: tuple[str, ...]  # one word, or the words of a phrase
    prefix: bool = False

    def fts(self) -> str:
        # words hold letters and digits only, so a double-quoted FTS5 string is always valid
        quoted = '"' + " ".join(self.words) + '"'
        return quoted + "*" if self.prefix else quoted


def _clean(text: str) -> str:
    # control and format characters (NUL, bidi overrides, private use) are never searchable
    return "".join(
        " " if unicodedata.category(ch) in {"Cc", "Cf", "Co", "Cs"} else ch for ch in text
    )


def parse_query(text: str) -> list[Term]:
    """The searchable terms of ``text``; :class:`QueryError` when there are none or too many."""
    if text is None or not text.strip():
        raise QueryError("empty query: type one or more words")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query too long: {len(text)} characters, at most {MAX_QUERY_CHARS}")
    text = unicodedata.normalize("NFKC", _clean(text))
    terms: list[Term] = []
    for match in _CHUNK.finditer(text):
        phrase, bare = match.group(1), match.group(2)
        if phrase is not None:
            words = tuple(w.lower() for w in _WORD.findall(phrase))
            if words:
                terms.append(Term(words))
            continue
        words = tuple(w.lower() for w in _WORD.findall(bare))
        if not words:
            continue
        prefix = bare.endswith("*") and len(words) == 1 and len(words[0]) >= MIN_PREFIX_CHARS
        terms.append(Term(words, prefix=prefix))
    if not terms:
        raise QueryError("no searchable words in the query (only punctuation or symbols)")
    if len(terms) > MAX_TERMS:
        raise QueryError(f"too many words: {len(terms)}, at most {MAX_TERMS}")
    terms = list(dict.fromkeys(terms))  # drop repeats, keep order
    content = [t for t in terms if not _is_stopword(t)]
    return content or terms


def _is_stopword(term: Term) -> bool:
    return len(term.words) == 1 and not term.prefix and term.words[0] in STOPWORDS


def match_expression(terms: list[Term], mode: str = "and") -> str:
    """The FTS5 ``MATCH`` string for ``terms``, combined with ``AND`` or ``OR``."""
    if mode not in ("and", "or"):
        raise ValueError(f"mode must be 'and' or 'or', not {mode!r}")
    return f" {mode.upper()} ".join(t.fts() for t in terms)
