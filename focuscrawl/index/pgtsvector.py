"""A page's ``tsvector`` built by the client and sent as a ``tsvector`` literal.

The server's ``to_tsvector`` was most of its CPU per indexed page (its parser alone 0.32 ms of
0.39 ms for a 1,566-character page); the client now builds what the row holds, exactly as the
server would (:mod:`focuscrawl.index.pgtokens` gives the lexemes):

* ``tsv`` = ``setweight(to_tsvector(title), 'A') || setweight(to_tsvector(body), 'D')``;
* ``title_tsv`` = ``to_tsvector(title)``.

Each goes as a text parameter cast ``::tsvector``: the page's lexemes in order, each with its
position (``'eagl':1A 'eat':2A 'eagl':3``), and the server's ``tsvectorin`` sorts them and
merges a lexeme's positions, in C. A lexeme is always quoted, its quotes and backslashes doubled
(:func:`quote`): whatever the text holds (quotes, backslashes, SQL), the literal is well formed,
and it is a bound parameter, never SQL. The server's limits hold as they do for its own
vectors: positions past 16,383 are 16,383 (kept once per lexeme), a lexeme keeps its first
positions — 256 of them where ``to_tsvector`` keeps 255, the one difference (only for a word
more than 255 times in a page; the rank moves by less than 1/255²).

When the client cannot (no PyStemmer, or text the client parser refuses), :func:`page_vectors`
returns None and the upsert asks the server's ``to_tsvector`` for that page, as before; a
missing stemmer is logged once.
"""

from __future__ import annotations

import logging
from operator import add
from typing import Any

from focuscrawl.index import pgschema, pgtokens

logger = logging.getLogger(__name__)

CFG = pgschema.CONFIG
MAX_POS = 16383  # MAXENTRYPOS - 1: later positions are this one
_ENTRY_CACHE = 200_000  # tokens whose literal entry is kept (a crawl's vocabulary; then cleared)
_CACHED_CHARS = 64  # longer tokens are not kept (a hostile page's cannot fill the memory)
_entry_of: dict[str, str] = {}
_POSITIONS = [str(i) for i in range(MAX_POS + 1)]  # the literal's positions, ready made
_POSITIONS_A = [f"{i}A" for i in range(MAX_POS + 1)]
_warned: list[bool] = []


def quote(lexeme: str) -> str:
    """``lexeme`` as the start of a tsvector literal's entry: ``'it''s':`` (a position follows)."""
    if "'" in lexeme or "\\" in lexeme:
        lexeme = lexeme.replace("\\", "\\\\").replace("'", "''")
    return f"'{lexeme}':"


def available() -> bool:
    """Whether the client can build tsvectors (PyStemmer installed); says once when not."""
    if pgtokens.stemmer() is not None:
        return True
    if not _warned:
        _warned.append(True)
        logger.warning(
            "PyStemmer is not installed: PostgreSQL builds every page's tsvector itself"
            " (more server CPU per page); pip install 'focuscrawl[postgres]' to build them here"
        )
    return False


def _entries(text: str) -> list[str] | None:
    """The literal entries of ``text``'s lexemes (``'eagl':``, a position to follow), in
    position order; None when the server must parse ``text``."""
    if not pgtokens.parsable(text):
        return None
    toks = pgtokens.tokens(text)
    out = list(map(_entry_of.get, toks))
    if None in out:
        new = list({t for t, e in zip(toks, out, strict=True) if e is None})
        found = {
            tok: quote(lex) if lex else ""
            for tok, lex in zip(new, pgtokens.lexemes_of(new), strict=True)
        }
        if len(_entry_of) > _ENTRY_CACHE:
            _entry_of.clear()
        _entry_of.update((t, e) for t, e in found.items() if len(t) <= _CACHED_CHARS)
        out = [found[t] if e is None else e for t, e in zip(toks, out, strict=True)]
    if "" in out:  # a token the server skips (too long)
        return [e for e in out if e]  # type: ignore[misc]
    return out  # type: ignore[return-value]


def _positions(table: list[str], first: int, count: int) -> list[str]:
    """``count`` positions from ``first`` (those past :data:`MAX_POS` are it, as the server's)."""
    out = table[first : first + count]
    if len(out) < count:
        out += [table[MAX_POS]] * (count - len(out))
    return out


def literals(title: list[str], body: list[str]) -> tuple[str, str]:
    """The literals of ``tsv`` and ``title_tsv`` from the title's and the body's entries
    (:func:`_entries`): positions 1… for the title (weight A), then the body's."""
    t = len(title)
    entries = list(map(add, title, _positions(_POSITIONS_A, 1, t)))
    entries += map(add, body, _positions(_POSITIONS, t + 1, len(body)))
    return " ".join(entries), " ".join(map(add, title, _positions(_POSITIONS, 1, t)))


def page_vectors(title: str, body: str) -> tuple[str, str] | None:
    """The literals of ``(tsv, title_tsv)`` of a page (text already cleaned, capped and
    accent-folded), or None when the server must build them."""
    if not available():
        return None
    title_entries = _entries(title)
    if title_entries is None:
        return None
    body_entries = _entries(body)
    if body_entries is None:
        return None
    return literals(title_entries, body_entries)


#: text whose lexemes differ between Snowball releases (PyStemmer 3's English stems
#: "universities" to "universiti", PostgreSQL 15's to "univers") and between token rules
PROBE_TITLE = "Universities of the U.S."
PROBE_TEXT = (
    "International organizations' emergency adds archaeologists, evening pasts: well-known"
    " 1990s covid-19 3.14 1.2.3 e-mail x.org/a info@x.org mid-1980s Ελλάδα ΟΔΟΣ İstanbul"
)


def server_agrees(conn: Any) -> bool:
    """Whether the server's ``to_tsvector`` gives the client's vectors on :data:`PROBE_TEXT`
    (another PostgreSQL release may stem otherwise: then the server builds every page's)."""
    vectors = page_vectors(PROBE_TITLE, PROBE_TEXT)
    if vectors is None:
        return False
    with conn.transaction():
        row = conn.execute(
            f"SELECT %s::tsvector = setweight(to_tsvector('{CFG}', %s), 'A')"
            f" || setweight(to_tsvector('{CFG}', %s), 'D')",
            (vectors[0], PROBE_TITLE, PROBE_TEXT),
        ).fetchone()
    if row[0]:
        return True
    logger.warning(
        "this PostgreSQL server's text search gives other lexemes than the client's stemmer"
        " (another Snowball release?): the server builds every page's tsvector"
    )
    return False
