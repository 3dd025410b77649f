"""A fast 64-bit simhash of weighted terms, vectorised with NumPy.

Differences from the ``simhash`` package (documented in docs/change.md, measured by
``bench/bench_simhash.py``):

- features are the page's *terms* (words and numbers, volatile tokens masked, see
  :mod:`focuscrawl.change.terms`) weighted by their count, not character 4-grams of the
  concatenated word characters;
- each feature's 64-bit hash is a polynomial hash of its UTF-8 bytes modulo 2**64 followed by
  the splitmix64 finaliser, computed for all features at once, instead of one ``md5`` call per
  feature. So the fingerprints differ from the package's; both are stable across processes.
- weights are sublinear (``1 + ln count``) and summed in float64, so a long page with a frequent term cannot overflow (the package
  sums into uint8 arrays and raises ``OverflowError`` under NumPy 2 past a weight of 255).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

_MASK = (1 << 64) - 1
_P = 0x100000001B3  # the FNV-1 64-bit prime: odd, so invertible modulo 2**64
_P_INV = pow(_P, -1, 1 << 64)


def _powers(base: int, n: int) -> np.ndarray:
    out = np.empty(n, dtype=np.uint64)
    if n:
        out[0] = 1
        out[1:] = base
        np.multiply.accumulate(out, out=out)  # integer arrays wrap modulo 2**64, silently
    return out


_POW_CACHE: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _pow_tables(n: int) -> tuple[np.ndarray, np.ndarray]:
    size = 1 << max(12, (n - 1).bit_length())
    tables = _POW_CACHE.get(size)
    if tables is None:
        tables = (_powers(_P, size), _powers(_P_INV, size))
        _POW_CACHE.clear()
        _POW_CACHE[size] = tables
    return tables


_GOLDEN, _M1, _M2 = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xBF58476D1CE4E5B9),
    np.uint64(0x94D049BB133111EB),
)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_ONE = np.uint64(1)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + _GOLDEN
    x ^= x >> _S30
    x *= _M1
    x ^= x >> _S27
    x *= _M2
    x ^= x >> _S31
    return x


def feature_hashes(features: list[str]) -> np.ndarray:
    """A stable 64-bit hash per feature (uint64 array), all computed in one pass."""
    if not features:
        return np.zeros(0, dtype=np.uint64)
    # one buffer "f1\x00f2\x00…": each feature's hash is a slice of the prefix sums
    data = np.frombuffer(("\x00".join(features) + "\x00").encode("utf-8"), dtype=np.uint8)
    n = data.size
    powers, inv_powers = _pow_tables(n + 1)
    # +1 so that a zero byte inside a feature still counts
    terms = (data.astype(np.uint64) + _ONE) * powers[:n]
    prefix = np.zeros(n + 1, dtype=np.uint64)
    np.add.accumulate(terms, out=prefix[1:])
    ends = np.flatnonzero(data == 0)
    starts = np.zeros_like(ends)
    starts[1:] = ends[:-1] + 1
    raw = (prefix[ends] - prefix[starts]) * inv_powers[starts]
    raw += (ends - starts).astype(np.uint64)  # the length, so "a" and "a\x00" differ
    return _splitmix64(raw)


def simhash64(weights: Mapping[str, int | float], *, sublinear: bool = True) -> int:
    """The 64-bit simhash of weighted features (e.g. a document index term → count).

    Bit ``i`` is set when the features whose hash has bit ``i`` set carry more than half of
    the total weight. An empty mapping hashes to 0. ``sublinear`` weighs a count ``c`` as
    ``1 + ln c``: with raw counts the frequent words dominate every bit and a changed word
    flips a bit in only ~26% of one-word edits of an 800-word page (~70% with ``1 + ln c``,
    like the package's 4-grams; ``bench/bench_simhash.py``).
    """
    if not weights:
        return 0
    hashes = feature_hashes(list(weights))
    w = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
    if sublinear:
        w = 1.0 + np.log(np.maximum(w, 1.0))
    # bit i of hash j is bits[j, i]: little-endian bytes, little-endian bits
    bits = np.unpackbits(
        hashes.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little"
    )
    ones = w @ bits  # weight of the features with each bit set
    packed = np.packbits(ones > (w.sum() / 2.0), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two 64-bit fingerprints."""
    return ((a ^ b) & _MASK).bit_count()


def simhash_text(text: str) -> int:
    """The simhash of a text: its document index (terms, volatile tokens masked) hashed."""
    from focuscrawl.change.terms import document_index

    return simhash64(document_index([text]))
