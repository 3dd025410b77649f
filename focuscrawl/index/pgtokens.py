"""PostgreSQL's text-search parsing, on the client: the lexemes ``to_tsvector('focuscrawl', text)``
gives, in order (used by :mod:`focuscrawl.index.pgtsvector`).

The ``focuscrawl`` configuration (:mod:`focuscrawl.index.pgschema`) is PostgreSQL's default
parser with a Snowball English stemmer for words and no stop words, ``simple`` (lower-casing) for
numbers, hosts, paths and the like; tags, entities and protocol heads give no lexeme. Every other
token gives exactly one lexeme, at the next position. This module reproduces the parser's token
rules as one ordered regular expression (:data:`TOKEN_RULES`: the parser's states, in the order
it tries them) for the tokens real text is made of — words, hyphenated words and their parts,
numbers, decimals, versions, signed integers, words with digits — and approximates the rare ones
(hosts, e-mail addresses, URLs, file paths). Text that the parser reads in a way a regular
expression cannot follow (an XML tag, which may span spaces and switch the parser off until
``</script>``; combining marks, which the parser keeps inside words; numeric symbols like ``❺``)
is refused: :func:`lexemes` returns None and the caller lets the server parse it.

The stemmer is PyStemmer's Snowball English, the C code of PostgreSQL's ``snowball`` dictionary
(PyStemmer 2.2: Snowball 2.2, whose English stems are PostgreSQL 15's; Snowball 3 stems
"universities" to "universiti", so :func:`focuscrawl.index.pgtsvector.server_agrees` checks the
server on open). Without the package, :func:`stemmer` is None and every page goes to the server.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Any

MAX_TOKEN_BYTES = 2048  # PostgreSQL skips a token this long or longer: no lexeme, no position
MAX_STEM_BYTES = 1000  # the snowball dictionary lower-cases a longer word without stemming it

# Possessive quantifiers and lookaheads keep every rule linear: no rule can split a run two
# ways, so no text makes the expression backtrack (a run of "a.a.a." took exponential time).
_ALNUM = r"[^\W_]"  # a letter or a digit (any script)
_LETTER = r"[^\W\d_]"
_WITH_LETTER = r"(?=\d*+[^\W\d_])[^\W_]++"  # letters and digits, a letter among them
_LABEL = r"[A-Za-z0-9]++(?:[_\-][A-Za-z0-9]++)*+"
# (a number does not go on with "-" into a host: "0-y.ee" is 0 then y.ee)
_HOST = rf"(?![0-9]++-){_LABEL}(?:\.{_LABEL})*\.[A-Za-z]{{2,}}(?![A-Za-z0-9_])(?::[0-9]++)?"
_FILE_PART = r"[A-Za-z0-9_][A-Za-z0-9_\-]*+"
_NUMWORD = r"(?=[^\W\d_]*+\d)[^\W_]++"  # letters of any script with a digit: a path may follow
_PATH_ON = rf"(?:\.{_FILE_PART}|/~?{_FILE_PART})*+"  # more of a path: ".part", "/part", "/~part"
# "~" and "." start a path only where the parser is between tokens, not inside a run of
# separators (which swallows them): at the start of the text or right after a token
_AFTER_TOKEN = r"(?:\A|(?<=[^\W_]))"

#: the token rules, in the parser's order of preference; the group that matched names the
#: token's kind: ``skip`` gives no lexeme, ``simple`` is lower-cased, ``word`` is lower-cased
#: and stemmed (a word with a digit, ``numword``, is lower-cased only), ``url`` and ``hyphen``
#: give several lexemes
TOKEN_RULES = re.compile(
    rf"""
    (?P<skip>&(?:\#[0-9]++|\#[xX][0-9A-Fa-f]++|[A-Za-z:_][A-Za-z0-9:_.\-]*+);  # XML entity
        |[A-Za-z]++://)                                                  # protocol head
    |(?P<url>{_HOST}/[^\s"\\]++)                                          # host, path
    |(?P<email>[A-Za-z0-9]++(?:[.\-][A-Za-z0-9]++)*+@{_HOST})
    |(?P<host>{_HOST})
    |(?P<number>[0-9]++(?:\.[0-9]++)?[eE][-+]?[0-9]++                    # sfloat
        |[0-9]++(?:\.[0-9]++)++)                                        # float, version
    |(?P<file>(?:[A-Za-z0-9]++|{_NUMWORD}|{_AFTER_TOKEN}(?:~{_FILE_PART}|\.\.?(?=/))|(?=/))
        (?:\.{_FILE_PART})*+/~?{_FILE_PART}{_PATH_ON}                   # a path with a slash
        |(?=[0-9]*+[A-Za-z])[A-Za-z0-9]++(?:\.{_FILE_PART})++            # u.s, e.g, abc.de1
        |{_AFTER_TOKEN}(?:~{_FILE_PART}{_PATH_ON}|\.\.(?=\s|\Z)))
    |(?P<signed>[-+][0-9]++(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?(?!\.[0-9]))  # -2.5.1: - 2.5.1
    |(?P<hyphen>(?:{_LETTER}{_ALNUM}*+|[0-9]++{_LETTER}{_ALNUM}*+)(?:-{_WITH_LETTER})++)
        (?:-(?=[0-9]))?
    |(?P<word>{_ALNUM}++)
    """,
    re.VERBOSE,
)

#: a run of non-space characters this long is left to the server (each rule is linear, but a
#: failed rule may read a run again from each of its tokens)
MAX_RUN = 500
_LONG_RUN = re.compile(rf"\S{{{MAX_RUN + 1}}}")

#: an XML tag or comment: the parser drops it (it may span spaces; after ``<script`` or
#: ``<style`` the parser skips text until the closing tag)
_TAG = re.compile(r"<[A-Za-z/!?:_]")


#: characters that join letters and digits into another kind of token (a host, a path, a
#: hyphenated word, a number with a sign, a point or an exponent) when a token character
#: follows; a run of non-space characters with none of them is plain words and numbers
_TRIGGER = re.compile(r"[.@/:&~+\-][^\s,;!()\"'\[\]]|[0-9]e[0-9+\-]")
_WORDS = re.compile(r"[^\W_]+")
_RUN = re.compile(r"\S*")
#: combining marks (the parser keeps them inside a word, ``\w`` does not) and numeric symbols
#: other than digits (``\w`` has them, the parser does not)
_ODD_CATEGORIES = frozenset({"Mn", "Mc", "Me", "No", "Nl"})


@functools.cache
def stemmer() -> Callable[[list[str]], list[str]] | None:
    """PyStemmer's Snowball English ``stemWords``, or None when the package is missing."""
    try:
        import Stemmer  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    stem: Any = Stemmer.Stemmer("english", 0)  # no cache: pgtsvector keeps the tokens' entries
    return stem.stemWords  # type: ignore[no-any-return]


def parsable(text: str, *, runs: bool = True) -> bool:
    """Whether :func:`lexemes` follows the server's parser on ``text`` (``runs=False``: but
    for the length of its runs, which the compiled tokeniser checks as it reads them)."""
    if "<" in text and _TAG.search(text):
        return False
    if runs and len(text) > MAX_RUN and _LONG_RUN.search(text):
        return False
    if text.isascii():
        return True
    category = unicodedata.category
    return not any(ord(c) > 127 and category(c) in _ODD_CATEGORIES for c in set(text))


def pg_lower(text: str) -> str:
    """PostgreSQL's lower-casing (a character at a time: no final sigma, no dotted i)."""
    if text.isascii():
        return text.lower()
    if "\u03a3" in text:  # Σ: σ everywhere (str.lower() makes a final one ς)
        text = text.replace("\u03a3", "\u03c3")
    if "\u0130" in text:  # İ: i (str.lower() adds a combining dot)
        text = text.replace("\u0130", "i")
    return text.lower()


def tokens(text: str) -> list[str]:
    """The lower-cased tokens of ``text`` that give a lexeme, in order."""
    low = pg_lower(text)
    out: list[str] = []
    pos = 0
    for trigger in _TRIGGER.finditer(low):
        start = trigger.start()
        if start < pos:
            continue  # in the run just read
        while start > pos and not low[start - 1].isspace():
            start -= 1  # back to the start of the run of non-space characters
        end = _RUN.match(low, start).end()  # type: ignore[union-attr]
        if start > pos:
            out += _WORDS.findall(low, pos, start)
        span_tokens(low, start, end, out)
        pos = end
    out += _WORDS.findall(low, pos)
    return out


def span_tokens(low: str, start: int, end: int, out: list[str]) -> None:
    """The tokens of ``low[start:end]`` (a run of non-space characters), by :data:`TOKEN_RULES`."""
    append = out.append
    for m in TOKEN_RULES.finditer(low, start, end):
        kind = m.lastgroup
        tok = m.group(kind)  # type: ignore[arg-type]
        if kind == "hyphen":
            append(tok)  # the hyphenated word, then its parts
            out += tok.split("-")
        elif kind == "url":
            slash = tok.index("/")
            out += (tok, tok[:slash], tok[slash:])  # the URL, its host, its path
        elif kind != "skip":
            append(tok)


def _stemmed(token: str) -> bool:
    """Whether the parser's token goes to the stemmer: a word of letters or a hyphenated one
    (a token with a digit or a symbol is only lower-cased)."""
    return token.isalpha() or ("-" in token and token.replace("-", "").isalpha())


def lexemes(text: str) -> list[str] | None:
    """The lexemes of ``text`` in position order (one per position, from 1), as the server's
    ``to_tsvector('focuscrawl', text)`` makes them; None when the server must parse it (see
    :func:`parsable`) or no stemmer is installed."""
    if stemmer() is None or not parsable(text):
        return None
    return [lex for lex in lexemes_of(tokens(text)) if lex]


def lexemes_of(toks: list[str]) -> list[str]:
    """Each token's lexeme: stemmed, lower-cased only, or "" (too long: the server skips it).
    Needs :func:`stemmer`."""
    stem_words = stemmer()
    assert stem_words is not None
    sizes = [len(t) if len(t) * 4 < MAX_STEM_BYTES else len(t.encode("utf-8")) for t in toks]
    out = [tok if size < MAX_TOKEN_BYTES else "" for tok, size in zip(toks, sizes, strict=True)]
    stem = [i for i, t in enumerate(toks) if sizes[i] <= MAX_STEM_BYTES and _stemmed(t)]
    for i, lex in zip(stem, stem_words([toks[i] for i in stem]), strict=True):
        out[i] = lex
    return out
