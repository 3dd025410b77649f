"""A near-duplicate index of 64-bit simhashes: which page already seen is within ``k`` bits.

Lookup by bands (Manku, Jain & Das Sarma, WWW 2007): the 64 bits are cut into ``k + 1``
bands; two fingerprints within ``k`` bits agree on at least one whole band (pigeonhole), so
the candidates of a page are the pages that share one of its bands, and only those are
compared. Exact: no pair within ``k`` bits is missed, none farther is reported.

Memory is a fixed number of bytes per page, in flat arrays (no Python object per page):
simhash 8, content digest 8, relevance 4, URL offset 8, one 4-byte id per band, and the
URL's UTF-8 bytes — ``44 + len(url)`` bytes at ``k = 3`` (see :meth:`bytes_per_page`), plus
at most ``2**band_bits`` bucket arrays per band. Past ``max_pages`` pages nothing more is
added (pages are still looked up against those kept), so the index stays bounded.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from focuscrawl.dedup.fingerprint import TextPrint

MAX_BITS = 8  # 9 bands of 7-8 bits: past this the buckets are too coarse to be an index
_MASK64 = (1 << 64) - 1
VECTOR_FROM = 24  # candidates in one bucket from which NumPy compares them at once


@dataclass(frozen=True, slots=True)
class Match:
    """The page a new one duplicates: its URL, its relevance, and how close it is."""

    url: str
    relevance: float
    distance: int  # differing simhash bits
    exact: bool  # same content digest


def bands(bits: int) -> list[tuple[int, int]]:
    """``(shift, width)`` of the ``bits + 1`` bands that cover the 64 bits."""
    n = bits + 1
    widths = [64 // n + (1 if i < 64 % n else 0) for i in range(n)]
    out, shift = [], 0
    for width in widths:
        out.append((shift, width))
        shift += width
    return out


class NearDuplicateIndex:
    """Simhashes of the pages seen, found again within ``bits`` differing bits.

    ``bits = 0`` finds exact copies only (same content digest)."""

    def __init__(self, bits: int = 3, max_pages: int = 2_000_000) -> None:
        if not 0 <= bits <= MAX_BITS:
            raise ValueError(f"bits must be between 0 and {MAX_BITS}, got {bits}")
        self.bits = bits
        self.max_pages = max_pages
        self._bands = bands(bits)
        self._buckets: list[dict[int, array[int]]] = [{} for _ in self._bands]
        self._simhash: array[int] = array("Q")
        self._digest: array[int] = array("Q")
        self._relevance: array[float] = array("f")
        self._url_end: array[int] = array("Q")
        self._urls = bytearray()

    def __len__(self) -> int:
        return len(self._simhash)

    @property
    def full(self) -> bool:
        return 0 < self.max_pages <= len(self._simhash)

    def find(self, fp: TextPrint) -> Match | None:
        """The first page added whose simhash is within ``bits`` of ``fp`` (an exact copy
        first), or None."""
        best = -1
        best_distance = 65
        simhashes, digests = self._simhash, self._digest
        for (shift, width), buckets in zip(self._bands, self._buckets, strict=True):
            ids = buckets.get((fp.simhash >> shift) & ((1 << width) - 1))
            if ids is None:
                continue
            if len(ids) >= VECTOR_FROM and self.bits:
                ids = self._near(ids, fp.simhash)
            for i in ids:
                if self.bits == 0:
                    if digests[i] != fp.digest:
                        continue
                    distance = 0
                else:
                    distance = ((simhashes[i] ^ fp.simhash) & _MASK64).bit_count()
                    if distance > self.bits:
                        continue
                # the closest; among equals the first added (ids grow with time)
                if distance < best_distance or (distance == best_distance and i < best):
                    best, best_distance = i, distance
        if best < 0:
            return None
        return Match(
            url=self.url(best),
            relevance=float(self._relevance[best]),
            distance=best_distance,
            exact=digests[best] == fp.digest,
        )

    def _near(self, ids: array[int], simhash: int) -> list[int]:
        """The ids of a big bucket within ``bits`` of ``simhash`` (views released on return:
        an array exporting its buffer cannot grow)."""
        idx = np.frombuffer(ids, dtype=np.uint32)
        near = np.bitwise_count(
            np.frombuffer(self._simhash, dtype=np.uint64)[idx] ^ np.uint64(simhash)
        )
        return idx[near <= self.bits].tolist()

    def add(self, url: str, fp: TextPrint, relevance: float = 0.0) -> bool:
        """Remember a page (the first of its kind); False when the index is full."""
        if self.full:
            return False
        i = len(self._simhash)
        self._simhash.append(fp.simhash & _MASK64)
        self._digest.append(fp.digest & _MASK64)
        self._relevance.append(relevance)
        self._urls += url.encode("utf-8", "surrogatepass")
        self._url_end.append(len(self._urls))
        for (shift, width), buckets in zip(self._bands, self._buckets, strict=True):
            key = (fp.simhash >> shift) & ((1 << width) - 1)
            ids = buckets.get(key)
            if ids is None:
                ids = buckets[key] = array("I")
            ids.append(i)
        return True

    def url(self, i: int) -> str:
        start = self._url_end[i - 1] if i else 0
        return self._urls[start : self._url_end[i]].decode("utf-8", "surrogatepass")

    def bytes_per_page(self) -> float:
        """Bytes the flat arrays hold per page (mean URL length included; bucket and array
        headers, a fixed cost of at most ``2**width`` small arrays per band, excluded)."""
        n = len(self._simhash)
        if not n:
            return 0.0
        fixed = 8 + 8 + 4 + 8 + 4 * len(self._bands)
        return fixed + len(self._urls) / n
