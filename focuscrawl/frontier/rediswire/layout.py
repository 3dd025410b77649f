"""The sizes a frontier's keys are laid out with, fixed by the first worker in ``P:meta``."""

from __future__ import annotations

import hashlib
import math

__all__ = ["bloom_offsets", "bloom_size", "bucket_bits_for"]


def bucket_bits_for(capacity: int) -> int:
    """Enough de-dup buckets for about 32 fingerprints each at ``capacity`` URLs (listpack-sized)."""
    return max(4, min(28, math.ceil(math.log2(max(capacity, 16) / 32))))


def bloom_size(capacity: int, error_rate: float) -> tuple[int, int]:
    """(bits, hashes) of a Bloom filter holding ``capacity`` items at ``error_rate``."""
    bits = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
    hashes = max(1, round(bits / capacity * math.log(2)))
    return bits, hashes


def bloom_offsets(fingerprint: bytes, bits: int, hashes: int) -> str:
    """``key:offset`` bit positions of ``fingerprint`` (double hashing), keys of 2**31 bits."""
    digest = hashlib.blake2b(fingerprint, digest_size=16).digest()
    h1 = int.from_bytes(digest[:8], "big")
    h2 = int.from_bytes(digest[8:], "big") | 1
    out = []
    for i in range(hashes):
        pos = (h1 + i * h2) % bits
        out.append(f"{pos >> 31}:{pos & 0x7FFFFFFF}")
    return ",".join(out)
