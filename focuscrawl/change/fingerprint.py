"""Fingerprints of one version of a page: headers, size, body hash, document index, simhash,
content.

A :class:`Fingerprints` is what the change store keeps per version and what every detection
technique compares: Last-Modified, ETag, size and body hash come from the HTTP exchange; the
document index (term → count of the text blocks and the title), its hash, the simhash and the
hash of the content links come from the partitioned :class:`~focuscrawl.blocks.model.Page`; so
does the content a reader sees (:mod:`focuscrawl.change.content`: normalised lines and content
links), kept so that the next version can say what changed, and its hash. A crawl's records keep
the content, not the document index (``fingerprint(…, terms=True)`` adds it, for the techniques
the evaluation compares).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import zlib
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.blocks.model import Page
from focuscrawl.change.content import Content, NoiseRules, content_of
from focuscrawl.change.simhash import simhash64
from focuscrawl.change.terms import document_index

logger = logging.getLogger(__name__)


def short_hash(data: bytes) -> str:
    """A 64-bit blake2b digest in hex: plenty to tell versions of one URL apart."""
    return hashlib.blake2b(data, digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What counts as content and when its change is significant (``FOCUSCRAWL_CHANGE_*``)."""

    min_terms: int = 1  # term occurrences added + removed
    min_fraction: float = 0.0  # … as a fraction of the old version's term occurrences
    mask_dates: bool = False  # treat a bare date stamp as noise (see terms.DATE_RULES)
    simhash_bits: int = 0  # the simhash technique: changed when more bits than this differ
    # noise blocks at least this content-like still count as content: the partition gives
    # 0.05 to blocks marked by a cue (nav, footer, ads, sidebars) and 0.15 to unmarked text
    # outside the article (data tables, figures: a fund's value is such a block)
    min_block_weight: float = 0.1
    # the sites' own noise: (URL glob, regexes) pairs, see content.noise_rules
    noise: NoiseRules = ()


DEFAULT_THRESHOLDS = Thresholds()


@dataclass(slots=True)
class Fingerprints:
    size: int = 0  # body bytes
    body_hash: str = ""  # hash of the raw body
    text_hash: str = ""  # hash of the document index: equal ⇔ same content terms
    links_hash: str = ""  # hash of the content links (url + anchor), noise links left out
    simhash: int = 0  # 64-bit simhash of the document index
    n_links: int = 0  # content links (not noise)
    etag: str = ""
    last_modified: str = ""
    doc_index: dict[str, int] = field(default_factory=dict)
    content_hash: str = ""  # hash of the content's tokens: equal ⇔ a reader sees the same
    # the content as stored (Content.pack): read back only when a diff needs it, since most
    # visits find the same content hash; "" for a record of an older version
    packed_content: str = ""
    _content: Content | None = field(default=None, repr=False, compare=False)
    # the document index as stored: a record read back is written again as it was, not
    # re-encoded (a crawl writes each page's record twice: the item, then the store)
    _packed_index: str = field(default="", repr=False, compare=False)

    @property
    def content(self) -> Content | None:
        """What a reader sees of this version (None: not kept, or unreadable)."""
        if self._content is None and self.packed_content:
            try:
                self._content = Content.unpack(self.packed_content)
            except ValueError as exc:
                logger.warning("change: unreadable content record (%s): compared by terms", exc)
                self.packed_content = ""
        return self._content

    def set_content(self, content: Content) -> None:
        self._content = content
        self.content_hash = content.digest
        self.packed_content = ""  # packed on the first to_dict

    # --- compact, versioned serialisation (the stores keep this) -------------------------
    def to_dict(self) -> dict[str, Any]:
        """A compact JSON-able dict; the document index (when computed: ``terms=True``) and the
        content are zlib-compressed JSON in base64."""
        out: dict[str, Any] = {
            "v": 1,
            "s": self.size,
            "b": self.body_hash,
            "l": self.links_hash,
            "e": self.etag,
            "m": self.last_modified,
            "k": self.n_links,
        }
        if self.text_hash or self.doc_index:  # the document index: kept when computed
            if not self._packed_index:
                doc = json.dumps(self.doc_index, separators=(",", ":")).encode()
                self._packed_index = base64.b64encode(zlib.compress(doc, 6)).decode("ascii")
            out["t"] = self.text_hash
            out["h"] = f"{self.simhash:016x}"
            out["d"] = self._packed_index
        if self._content is not None and not self.packed_content:
            self.packed_content = self._content.pack()
        if self.packed_content:
            out["q"] = self.content_hash
            out["c"] = self.packed_content
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fingerprints:
        """Read what :meth:`to_dict` wrote; unknown or missing fields fall back to empty.

        Raises ``ValueError`` for data that is not a fingerprint record at all.
        """
        if not isinstance(data, dict):
            raise ValueError(f"not a fingerprint record: {type(data).__name__}")
        doc: dict[str, int] = {}
        if data.get("d"):
            try:
                doc = json.loads(zlib.decompress(base64.b64decode(data["d"])))
            except (ValueError, zlib.error) as exc:
                raise ValueError(f"corrupt document index: {exc}") from exc
        return cls(
            size=int(data.get("s", 0)),
            body_hash=str(data.get("b", "")),
            text_hash=str(data.get("t", "")),
            links_hash=str(data.get("l", "")),
            simhash=int(str(data.get("h", "0")) or "0", 16),
            etag=str(data.get("e", "")),
            last_modified=str(data.get("m", "")),
            n_links=int(data.get("k", 0)),
            doc_index=doc,
            content_hash=str(data.get("q", "")) if data.get("c") else "",
            packed_content=str(data.get("c") or ""),
            _packed_index=str(data.get("d") or ""),
        )


def text_of(page: Page, min_block_weight: float = DEFAULT_THRESHOLDS.min_block_weight) -> list[str]:
    """What counts as content: the title, the text blocks and the noise blocks of at least
    ``min_block_weight`` (link blocks and cue-marked noise — nav, ads, footer — left out)."""
    texts = [page.title] if page.title else []
    texts.extend(
        b.text
        for b in page.blocks
        if b.text and (b.kind == "text" or (b.kind == "noise" and b.weight >= min_block_weight))
    )
    return texts


def links_hash(page: Page) -> str:
    pairs = sorted({f"{link.url}\t{link.anchor}" for link in page.links if not link.noise})
    return short_hash("\n".join(pairs).encode()) if pairs else ""


def index_hash(index: dict[str, int]) -> str:
    return short_hash(json.dumps(sorted(index.items()), separators=(",", ":")).encode())


def fingerprint(
    page: Page | None,
    body: bytes | str = b"",
    headers: dict[str, str] | None = None,
    *,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    content: bool = True,
    terms: bool = False,
) -> Fingerprints:
    """The fingerprints of one version: ``page`` parsed from ``body`` served with ``headers``.

    ``page`` may be ``None`` (a body that is not HTML, or a 304 with no body): then only the
    HTTP-level fingerprints are filled. ``content=False`` leaves out what a reader sees (the
    record of issue 6: the speed benchmark's baseline). ``terms=True`` adds the document index,
    its hash and its simhash: the techniques the evaluation compares with, which
    :func:`~focuscrawl.change.classify.classify` does not need when both versions carry their
    content (left out, they were ~60 % of a crawl's per-page change work and ~40 % of a record).
    """
    raw = body.encode("utf-8") if isinstance(body, str) else body
    h = {k.lower(): v for k, v in (headers or {}).items()}
    fp = Fingerprints(
        size=len(raw),
        body_hash=short_hash(raw),
        etag=h.get("etag", ""),
        last_modified=h.get("last-modified", ""),
    )
    if page is not None and not page.error:
        if terms or not content:
            fp.doc_index = document_index(
                text_of(page, thresholds.min_block_weight), mask_dates=thresholds.mask_dates
            )
            fp.text_hash = index_hash(fp.doc_index)
            fp.simhash = simhash64(fp.doc_index)
        fp.links_hash = links_hash(page)
        fp.n_links = sum(1 for link in page.links if not link.noise)
        if content:
            fp.set_content(
                content_of(page, mask_dates=thresholds.mask_dates, noise=thresholds.noise)
            )
    return fp
