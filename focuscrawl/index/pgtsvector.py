"""A page's ``tsvector`` built by the client and sent in PostgreSQL's binary format.

The server's ``to_tsvector`` was most of its CPU per indexed page (0.39 ms for a 1,566-character
page, its parser 0.32 ms); the client now builds what the row holds, as the server would
(:mod:`focuscrawl.index.pgtokens` gives the lexemes):

* ``tsv`` = ``setweight(to_tsvector(title), 'A') || setweight(to_tsvector(body), 'D')``;
* ``title_tsv`` = ``to_tsvector(title)``.

Each goes as a parameter of type ``tsvector`` in the binary wire format (``tsvectorrecv``): a
count, then per lexeme its UTF-8 bytes, a NUL, the number of positions and each position with
its weight in the two high bits of 16. The server reads it without parsing text (a text
literal cost it 0.23 ms a page to parse, sort and merge: most of what ``to_tsvector`` cost),
and nothing in it is quoted: whatever the text holds (quotes, backslashes, SQL), it cannot be
malformed, and the server checks what it receives (lexeme lengths, positions in order). The
server's limits are kept: positions from 1 capped at 16,383, at most 255 positions of a lexeme
from ``to_tsvector``, 256 after ``||`` (a page that reaches a cap takes the exact, slower path:
:func:`positions`, :func:`concat`).

When the client cannot (no PyStemmer, or text the client parser refuses), :func:`page_vectors`
returns None and the upsert asks the server's ``to_tsvector`` for that page, as before; a
missing stemmer is logged once.
"""

from __future__ import annotations

import functools
import logging
import struct
from collections.abc import Callable
from typing import Any

from psycopg.adapt import Dumper
from psycopg.pq import Format

from focuscrawl.index import compiled, pgschema, pgtokens

logger = logging.getLogger(__name__)

CFG = pgschema.CONFIG
TSVECTOR_OID = 3614  # pg_type.oid of tsvector (a built-in type: fixed)
MAX_POS = 16383  # MAXENTRYPOS - 1: later positions are this one
MAX_LEXEME_POSITIONS = 255  # to_tsvector keeps this many positions of a lexeme
MAX_CONCAT_POSITIONS = 256  # MAXNUMPOS: tsvector || tsvector keeps this many
WEIGHT_A = 3 << 14  # a position's weight in its two high bits (A = 3 ... D = 0)
_KEY_CACHE = 200_000  # tokens whose lexeme is kept (a crawl's vocabulary; then cleared)
_CACHED_CHARS = 64  # longer tokens are not kept (a hostile page's cannot fill the memory)
_key_of: dict[str, bytes] = {}  # token -> its lexeme's UTF-8 bytes and a NUL
_packers: dict[int, Callable[..., bytes]] = {}  # positions -> struct packer of the count and them
_warned: list[bool] = []


class TsVector:
    """A tsvector in PostgreSQL's binary format (a query parameter of type ``tsvector``)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __repr__(self) -> str:
        return f"TsVector({len(self.data)} bytes)"


class TsVectorDumper(Dumper):
    """Sends a :class:`TsVector` as it is, typed ``tsvector``, in the binary format."""

    format = Format.BINARY
    oid = TSVECTOR_OID

    def dump(self, obj: Any) -> bytes:
        return obj.data  # type: ignore[no-any-return]


def register(conn: Any) -> None:
    """Let ``conn`` send :class:`TsVector` parameters."""
    conn.adapters.register_dumper(TsVector, TsVectorDumper)


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


def _keys(text: str) -> list[bytes] | None:
    """The lexemes of ``text`` in position order, each as UTF-8 bytes and a NUL (the binary
    format's); None when the server must parse ``text``."""
    if not pgtokens.parsable(text):
        return None
    toks = pgtokens.tokens(text)
    out = list(map(_key_of.get, toks))
    if None in out:
        found = _resolve(list({t for t, k in zip(toks, out, strict=True) if k is None}))
        out = [found[t] if k is None else k for t, k in zip(toks, out, strict=True)]
    if b"" in out:  # a token the server skips (too long)
        return [k for k in out if k]  # type: ignore[misc]
    return out  # type: ignore[return-value]


def _lexeme_bytes(new: list[str]) -> dict[str, bytes]:
    """The lexeme bytes of tokens (b"" for one the server skips)."""
    return {
        tok: lex.encode("utf-8") + b"\0" if lex else b""
        for tok, lex in zip(new, pgtokens.lexemes_of(new), strict=True)
    }


def _resolve(new: list[str]) -> dict[str, bytes]:
    """:func:`_lexeme_bytes` of tokens not in the cache; cached."""
    found = _lexeme_bytes(new)
    if len(_key_of) > _KEY_CACHE:
        _key_of.clear()
    _key_of.update((t, k) for t, k in found.items() if len(t) <= _CACHED_CHARS)
    return found


_compiled_cache: list[Any] = []  # the compiled steps' LexemeCache, made on first use


def _compiled_keys(ctsv: Any, text: str) -> list[bytes] | None:
    """:func:`_keys` by the compiled steps (:mod:`focuscrawl.index.compiled`): tokens read and
    looked up in the compiled cache in one pass."""
    if not pgtokens.parsable(text, runs=False):
        return None
    if not _compiled_cache:
        _compiled_cache.append(ctsv.LexemeCache(_KEY_CACHE, _CACHED_CHARS))
    low = pgtokens.pg_lower(text)
    return ctsv.page_keys(  # type: ignore[no-any-return]
        low, _compiled_cache[0], _lexeme_bytes, pgtokens.span_tokens, pgtokens.MAX_RUN
    )


def _collect(
    out: dict[bytes, list[int]], keys: list[bytes], first: int, weight: int = 0
) -> dict[bytes, list[int]]:
    """Each lexeme's positions (``first`` on, with ``weight``) added to ``out``, uncapped."""
    get = out.get
    for i, key in enumerate(keys, first):
        got = get(key)
        if got is None:
            out[key] = [i | weight]
        else:
            got.append(i | weight)
    return out


def positions(keys: list[bytes]) -> dict[bytes, list[int]]:
    """Each lexeme's positions as ``to_tsvector`` keeps them (from 1; see the module)."""
    out: dict[bytes, list[int]] = {}
    for i, key in enumerate(keys, 1):
        pos = min(i, MAX_POS)
        got = out.get(key)
        if got is None:
            out[key] = [pos]
        elif len(got) < MAX_LEXEME_POSITIONS and got[-1] != MAX_POS and got[-1] != pos:
            got.append(pos)
    return out


def concat(title: dict[bytes, list[int]], body: dict[bytes, list[int]]) -> dict[bytes, list[int]]:
    """``setweight(title, 'A') || body``: weighted positions."""
    out = {key: [p | WEIGHT_A for p in ps] for key, ps in title.items()}
    shift = max((ps[-1] for ps in title.values()), default=0)
    for key, ps in body.items():
        dest = out.get(key)
        if dest is None:
            dest = out[key] = []
        for p in ps:
            if len(dest) >= MAX_CONCAT_POSITIONS or (dest and dest[-1] & MAX_POS == MAX_POS):
                break
            dest.append(min(p + shift, MAX_POS))
    return out


def vectors(
    title: list[bytes], body: list[bytes]
) -> tuple[dict[bytes, list[int]], dict[bytes, list[int]]]:
    """The row's ``tsv`` and ``title_tsv`` from the title's and the body's lexemes: in one
    pass when no cap is reached (the common case), else :func:`concat` of :func:`positions`."""
    t, n = len(title), len(title) + len(body)
    if t < MAX_LEXEME_POSITIONS and n < MAX_POS:
        tsv = _collect(_collect({}, title, 1, WEIGHT_A), body, t + 1)
        if n < MAX_LEXEME_POSITIONS or max(map(len, tsv.values())) < MAX_LEXEME_POSITIONS:
            return tsv, _collect({}, title, 1)
    title_vector = positions(title)
    return concat(title_vector, positions(body)), title_vector


@functools.cache
def _one_position() -> list[bytes]:
    """The binary form of one position (a count of 1, the weighted position), for each value."""
    pack = struct.Struct(">HH").pack
    return [pack(1, p) for p in range(1 << 16)]


def encode(vector: dict[bytes, list[int]]) -> TsVector:
    """The binary format of ``vector`` (lexeme bytes and NUL → positions), in lexeme order."""
    parts = [struct.pack(">i", len(vector))]
    append = parts.append
    one = _one_position()
    for key in sorted(vector):  # byte order (a NUL ends each): the server's order
        ps = vector[key]
        append(key)
        if len(ps) == 1:
            append(one[ps[0]])
        else:
            n = len(ps)
            pack = _packers.get(n)
            if pack is None:
                pack = _packers[n] = struct.Struct(f">H{n}H").pack
            append(pack(n, *ps))
    return TsVector(b"".join(parts))


def page_vectors(
    title: str, body: str, *, pure_python: bool = False
) -> tuple[TsVector, TsVector] | None:
    """``(tsv, title_tsv)`` of a page (text already cleaned, capped and accent-folded), or
    None when the server must build them; by the compiled steps when built
    (:mod:`focuscrawl.index.compiled`; the same bytes), else (or ``pure_python``) here."""
    if not available():
        return None
    ctsv = None if pure_python else compiled.ctsv()
    if ctsv is not None:
        title_keys = _compiled_keys(ctsv, title)
        body_keys = _compiled_keys(ctsv, body) if title_keys is not None else None
        if body_keys is None:
            return None
        done = ctsv.encode_page(title_keys, body_keys)
        if done is not None:
            return TsVector(done[0]), TsVector(done[1])
    else:
        title_keys = _keys(title)
        body_keys = _keys(body) if title_keys is not None else None
        if body_keys is None:
            return None
    assert title_keys is not None
    tsv, title_tsv = vectors(title_keys, body_keys)  # the caps' exact path
    return encode(tsv), encode(title_tsv)


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
    register(conn)
    with conn.transaction():
        row = conn.execute(
            f"SELECT %s = setweight(to_tsvector('{CFG}', %s), 'A')"
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
