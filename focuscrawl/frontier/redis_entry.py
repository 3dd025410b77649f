"""A Redis frontier entry as bytes: ``fplen fp flags deflate(url-rest \\0 json)``. Plain data,
nothing a worker would execute (read by :mod:`focuscrawl.frontier.redis_frontier` and the
quarantine)."""

from __future__ import annotations

import json
import zlib
from typing import Any

from focuscrawl.frontier.base import FrontierEntry
from focuscrawl.frontier.state import WIRE_KEYS
from focuscrawl.meta import STATE_META

# Entries are ``fplen fp flags deflate(url-rest \0 json)``. The deflate preset dictionary holds
# the JSON keys of the scheduler's request data and common URL parts, then the entry's own
# ``scheme://host`` (its host is in the key the entry sits under, so the URL is stored without
# that prefix and a parent URL on the same host compresses to a back-reference). The request's
# ``meta["focuscrawl"]["score"]`` is the entry's score: stored once, in the packed score.
# A 220-byte entry takes about 80 bytes. The request state's keys are its wire form
# (:meth:`~focuscrawl.frontier.state.RequestState.to_wire`). Changing any of this (or the wire
# keys) changes ENTRY_FORMAT (a crawl's
# keys record the format they were written in).
ENTRY_FORMAT = 2
MAX_ENTRY_BYTES = 1 << 20  # a deflate bomb planted in Redis stops here
_ZDICT = (
    b"http://https://www..com/.org/.html/index.php?id=&page="
    b'{"meta":{"focuscrawl":{"d":1,"inh":0.,"tb":0,"score":0.,"par":"https://www.'
    b'","seed":1,"ex":1},"depth":1,"redirect_urls":["https://'
    b'"]},"eb":"errback","cb":"parse","pr":0,"flags":[],"method":"POST","headers":{}}'
)
_SCHEMES = ("", "https://", "http://")  # flags & 3: the URL prefix left out (0: verbatim)
_SCORE_IN_META = 4  # flags & 4: meta["focuscrawl"]["score"] was the entry's score
_SCORE = WIRE_KEYS["score"]  # the score's key in the request state's wire form
_ATTEMPT_SHIFT = 3  # flags >> 3: unacknowledged deliveries (set by the requeue script)


def _zdict(prefix: str) -> bytes:
    return _ZDICT + prefix.encode() + b"/"


def encode_entry(
    url: str, fingerprint: bytes, data: dict[str, Any], host: str, score: float
) -> bytes:
    """``fplen fp flags deflate(url-rest \\0 json)``: plain data, nothing a worker would execute."""
    if not 8 <= len(fingerprint) <= 255:
        raise ValueError(f"fingerprint must be 8 to 255 bytes, got {len(fingerprint)}")
    flags, prefix = 0, ""
    for code, scheme in enumerate(_SCHEMES[1:], 1):
        if url.startswith(scheme + host):
            flags, prefix = code, scheme + host
            break
    meta = data.get("meta")
    fc = meta.get(STATE_META) if isinstance(meta, dict) else None
    if isinstance(fc, dict) and type(fc.get(_SCORE)) is float and fc[_SCORE] == score:
        data = {
            **data,
            "meta": {**meta, STATE_META: {k: v for k, v in fc.items() if k != _SCORE}},
        }  # type: ignore[dict-item]
        flags |= _SCORE_IN_META
    body = json.dumps(data, separators=(",", ":")) if data else ""
    # a 1 KB window and the smallest hash table: as small on entries this size, and setting up
    # the default 32 KB window and tables took 50 µs of CPU per entry (most of a push)
    packer = zlib.compressobj(6, zlib.DEFLATED, -10, 1, zdict=_zdict(prefix))
    packed = packer.compress(url[len(prefix) :].encode() + b"\0" + body.encode()) + packer.flush()
    return bytes([len(fingerprint)]) + fingerprint + bytes([flags]) + packed


def decode_entry(rest: bytes, score: float, host: str) -> FrontierEntry:
    n = rest[0]
    fingerprint = rest[1 : 1 + n]
    flags = rest[1 + n]
    prefix = _SCHEMES[flags & 3] + host if flags & 3 else ""
    unpacker = zlib.decompressobj(-15, zdict=_zdict(prefix))
    text = unpacker.decompress(rest[2 + n :], MAX_ENTRY_BYTES)
    if unpacker.unconsumed_tail:
        raise ValueError(f"frontier entry inflates past {MAX_ENTRY_BYTES} bytes: not ours")
    url, _, body = text.partition(b"\0")
    data = json.loads(body) if body else {}
    if flags & _SCORE_IN_META:
        data["meta"][STATE_META][_SCORE] = score
    return FrontierEntry(
        url=prefix + url.decode(),
        score=score,
        fingerprint=fingerprint,
        data=data,
        attempts=flags >> _ATTEMPT_SHIFT,
    )
