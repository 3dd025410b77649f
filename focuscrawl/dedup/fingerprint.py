"""What the near-duplicate index keeps of a page's main text: a 64-bit simhash of its word
pairs and a 64-bit digest of the exact text.

Word pairs (2-shingles), not single words: on the mirrored test web the closest two different
articles were 5 bits apart with single words (a shared vocabulary makes every bag of words look
alike) and 14 bits apart with pairs, while a copy with a changed date line moved at most 3 and
4 bits (``bench/bench_dedup.py --parts features``; docs/dedup.md).

The words are :func:`focuscrawl.change.terms.terms` (volatile tokens masked), with month names
and short numbers masked too (a date line, a comment count), and hashed with
:func:`focuscrawl.change.simhash.feature_hashes`; a pair's hash is mixed from its two words'
hashes in NumPy (no string per pair), then summed into 64 bits as
:func:`~focuscrawl.change.simhash.simhash64` does (weights ``1 + ln count``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

import numpy as np

from focuscrawl.change.simhash import feature_hashes
from focuscrawl.change.terms import EDGE, term_of, terms

#: texts longer than this are fingerprinted on their first this many characters (linear work
#: per page, whatever a page holds; 200,000 characters is some 30,000 words)
MAX_CHARS = 200_000
#: words masked before hashing: what a copy changes without changing its content
_MONTHS = frozenset(
    {
        "january", "february", "march", "april", "may", "june", "july", "august", "september",
        "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
        "sep", "sept", "oct", "nov", "dec",
    }
)  # fmt: skip
_ORDINAL = ("st", "nd", "rd", "th")
_P = np.uint64(0x100000001B3)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@dataclass(frozen=True, slots=True)
class TextPrint:
    simhash: int  # 64-bit simhash of the word pairs (weights 1 + ln count)
    digest: int  # 64-bit BLAKE2b of the whitespace-collapsed, case-folded text
    words: int  # terms counted: a text with few words is too thin to call a copy


def mask(word: str) -> str:
    """A month name or a number of up to four digits (``3``, ``2025``, ``21st``) → a mark."""
    if word in _MONTHS:
        return "<month>"
    if word.isdigit() and len(word) <= 4:
        return "<n>"
    if word[-2:] in _ORDINAL and word[:-2].isdigit() and len(word) <= 4:
        return "<n>"
    return word


def words_of(text: str) -> list[str]:
    return [mask(w) for w in terms(text[:MAX_CHARS])]


def shingles(words: list[str], size: int = 2) -> Counter[str]:
    """Counts of the runs of ``size`` consecutive words (the words themselves when fewer);
    the readable form of the features :func:`pair_simhash` hashes (``size`` 2)."""
    if len(words) < size:
        return Counter(words)
    return Counter(" ".join(words[i : i + size]) for i in range(len(words) - size + 1))


def pair_simhash(words: list[str]) -> int:
    """The 64-bit simhash of the word pairs of ``words`` (of the word, when only one)."""
    if not words:
        return 0
    vocab: dict[str, int] = {}
    ids = np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), np.intp, len(words))
    return _ids_simhash(list(vocab), ids)


def _ids_simhash(vocab: list[str], ids: np.ndarray) -> int:
    """:func:`pair_simhash` of the words ``vocab[i] for i in ids`` (``ids`` not empty)."""
    h = feature_hashes(vocab)[ids]
    if h.size > 1:
        x = h[:-1] * _P + h[1:]  # wraps modulo 2**64; order matters: (a, b) is not (b, a)
        x ^= x >> _S30
        x *= _M1
        x ^= x >> _S27
        x *= _M2
        x ^= x >> _S31
        h = x
    features, counts = np.unique(h, return_counts=True)
    weights = 1.0 + np.log(counts)
    bits = np.unpackbits(
        features.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little"
    )
    packed = np.packbits((weights @ bits) > (weights.sum() / 2.0), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def _word_ids(text: str) -> tuple[list[str], np.ndarray]:
    """``words_of(text)`` as a vocabulary and each word's index in it, with the term rules and
    the mask applied once per distinct token instead of once per word (a page repeats most of
    its tokens): the same words in the same order."""
    tokens = text.lower().split()
    vocab: dict[str, int] = {}
    index: dict[str, int] = {}
    months, edge = _MONTHS, EDGE
    for token in dict.fromkeys(tokens):
        # :func:`term_of` then :func:`mask`, inlined for the common cases: a word, or a word
        # with punctuation at its edges, is its own term, masked only as a month
        term = token if token.isalpha() else token.strip(edge)
        if not term:
            index[token] = -1
            continue
        if term.isalpha():
            if term in months:
                term = "<month>"
        else:
            term = mask(term_of(term))
        n = vocab.get(term)
        if n is None:
            n = vocab[term] = len(vocab)
        index[token] = n
    ids = np.fromiter(map(index.__getitem__, tokens), np.intp, len(tokens))
    if len(index) != len(vocab):  # some tokens are only punctuation: dropped, as by terms()
        ids = ids[ids >= 0]
    return list(vocab), ids


def text_print(text: str) -> TextPrint:
    """The fingerprints of a main text. A changed date line (``Updated March 3, 2025``) moves
    the simhash little: month names and short numbers are masked."""
    text = text[:MAX_CHARS]
    vocab, ids = _word_ids(text)
    flat = " ".join(text.split()).casefold().encode("utf-8", "surrogatepass")
    digest = int.from_bytes(hashlib.blake2b(flat, digest_size=8).digest(), "little")
    return TextPrint(_ids_simhash(vocab, ids) if ids.size else 0, digest, int(ids.size))
