"""The near-duplicate index shared by a cluster's workers through Redis (or a Redis Cluster).

The same bands as :class:`~focuscrawl.dedup.index.NearDuplicateIndex`, in Redis (``P`` is the
crawl's ``FOCUSCRAWL_REDIS_PREFIX``, e.g. ``focuscrawl:topical_redis``):

- ``{P:dup:b<i>}:<band value, hex>``: a string of 16-byte records (simhash, page id), grown
  with ``APPEND``; the hash tag puts every bucket of band ``i`` in one slot;
- ``{P:dup:e<id % 64>}``: a hash, page id → digest (8 bytes), relevance (float32), URL;
- ``P:dup:n``: the page-id counter (``INCR``).

A lookup is two round trips (the page's ``k + 1`` buckets in one pipeline, then the best
candidate's record); an add two (``INCR``, then the record and the ``k + 1`` appends). Every
command names one key, so a ``RedisCluster`` client routes them as a ``redis.Redis`` does.
About ``16 (k + 1) + 12 + len(url)`` bytes of values per page, plus Redis's own overhead.

What is read back may have been written by anyone who can write to that Redis: a bucket is read
at most :data:`MAX_BUCKET_BYTES` and cut to whole records, a record that does not decode or
whose URL is not an http(s) URL is no match. Two workers that fetch copies of one text at the
same moment may both find nothing and both be remembered as originals. Redis errors make a page
new (nothing is lost but a mark), counted in ``errors`` and logged.
"""

from __future__ import annotations

import logging
import struct
from typing import Any

import numpy as np

from focuscrawl.credentials import redact_text
from focuscrawl.dedup.fingerprint import TextPrint
from focuscrawl.dedup.index import MAX_BITS, Match, bands
from focuscrawl.frontier.trust import BadEntry, check_url

logger = logging.getLogger(__name__)

MAX_BUCKET_BYTES = 1 << 20  # of one band bucket read per lookup (65,536 records)
ENTRY_SHARDS = 64
_RECORD = np.dtype([("simhash", "<u8"), ("id", "<u8")])
_ENTRY = struct.Struct("<Qf")
_MASK64 = (1 << 64) - 1


class RedisDuplicateIndex:
    def __init__(self, client: Any, prefix: str, bits: int = 4, max_pages: int = 0) -> None:
        if not 0 <= bits <= MAX_BITS:
            raise ValueError(f"bits must be between 0 and {MAX_BITS}, got {bits}")
        self.client = client
        self.prefix = prefix
        self.bits = bits
        self.max_pages = max_pages
        self.errors = 0
        self._bands = bands(bits)

    def _bucket(self, band: int, simhash: int) -> str:
        shift, width = self._bands[band]
        return f"{{{self.prefix}:dup:b{band}}}:{(simhash >> shift) & ((1 << width) - 1):x}"

    def _entries(self, page_id: int) -> str:
        return f"{{{self.prefix}:dup:e{page_id % ENTRY_SHARDS}}}"

    def __len__(self) -> int:
        import redis

        try:
            return int(self.client.get(f"{self.prefix}:dup:n") or 0)
        except (redis.RedisError, ValueError):
            return 0

    def find(self, fp: TextPrint) -> Match | None:
        import redis

        try:
            pipe = self.client.pipeline(transaction=False)
            for band in range(len(self._bands)):
                pipe.getrange(self._bucket(band, fp.simhash), 0, MAX_BUCKET_BYTES - 1)
            buckets = pipe.execute()
            for page_id, distance in self._candidates(buckets, fp.simhash):
                match = self._match(page_id, distance, fp)
                if match is not None:
                    return match
        except redis.RedisError as exc:
            self._failed(exc)
        return None

    def _candidates(self, buckets: list[bytes], simhash: int) -> list[tuple[int, int]]:
        """``(page id, distance)`` within ``bits``, closest first, then oldest."""
        found: dict[int, int] = {}
        for raw in buckets:
            raw = raw or b""
            records = np.frombuffer(raw[: len(raw) - len(raw) % 16], dtype=_RECORD)
            if not records.size:
                continue
            near = np.bitwise_count(records["simhash"] ^ np.uint64(simhash & _MASK64))
            for page_id, distance in zip(
                records["id"][near <= self.bits].tolist(), near[near <= self.bits].tolist(),
                strict=True,
            ):  # fmt: skip
                found[page_id] = distance
        return sorted(found.items(), key=lambda item: (item[1], item[0]))[:16]

    def _match(self, page_id: int, distance: int, fp: TextPrint) -> Match | None:
        raw = self.client.hget(self._entries(page_id), str(page_id))
        if not raw or len(raw) < _ENTRY.size:
            return None
        digest, relevance = _ENTRY.unpack_from(raw)
        url = raw[_ENTRY.size :].decode("utf-8", "replace")
        try:
            check_url(url)
        except BadEntry:
            return None
        if self.bits == 0 and digest != fp.digest:
            return None
        relevance = relevance if 0.0 <= relevance <= 1.0 else 0.0  # NaN included
        return Match(url, float(relevance), distance, digest == fp.digest)

    def add(self, url: str, fp: TextPrint, relevance: float = 0.0) -> bool:
        import redis

        try:
            page_id = int(self.client.incr(f"{self.prefix}:dup:n"))
            if self.max_pages and page_id > self.max_pages:
                return False
            entry = _ENTRY.pack(fp.digest & _MASK64, relevance) + url.encode("utf-8", "replace")
            record = struct.pack("<QQ", fp.simhash & _MASK64, page_id)
            pipe = self.client.pipeline(transaction=False)
            pipe.hset(self._entries(page_id), str(page_id), entry)
            for band in range(len(self._bands)):
                pipe.append(self._bucket(band, fp.simhash), record)
            pipe.execute()
            return True
        except redis.RedisError as exc:
            self._failed(exc)
            return False

    def _failed(self, exc: Exception) -> None:
        self.errors += 1
        if self.errors == 1 or self.errors % 100 == 0:
            why = redact_text(str(exc))
            logger.warning("near-duplicate index on Redis: %s (%d errors)", why, self.errors)
