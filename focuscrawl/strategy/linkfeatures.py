"""The features the online link judge (:mod:`focuscrawl.strategy.linkjudge`) reads of a link:
hashed words and signatures, and a few numbers. Pure functions, no Scrapy import.

Hashed features are ids in ``[1, 2**bits)`` (0 is the padding of a short row): the anchor's and
the URL path's words, the link context's words, the host, the enclosing block's *signature*
(kind, tag, noise cue, template flag and position on the page: what a block is, not which block
it is, so that the signature recurs across a host's pages), the signature on that host, and the
linking page's kind and relevance band crossed with the signature. Words are hashed with CRC-32
(stable across processes: the crawl is deterministic), each word once, then salted per kind.

The numbers (:data:`NUMERIC`) are filled in by the judge from what it counts: the linking
page's relevance, the Shark-Search score, the in-link votes of relevant and irrelevant pages,
the yields so far of the link's block on that page (its siblings' outcomes), of its block
signature on its host and of its host.
"""

from __future__ import annotations

import zlib
from urllib.parse import urlsplit

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.strategy.linklearner import path_words
from focuscrawl.text import fast_tokens

#: the dense features, in column order
NUMERIC = (
    "bias",
    "parent_relevance",  # the linking page's relevance on the seed scale, 0..1
    "parent_relevant",  # 1 when the crawl judged the linking page relevant
    "shark",  # the Shark-Search score of the link (inherited + neighbourhood, votes)
    "words",  # the body-word model's lift of the link's words
    "rel_in",  # log1p(relevant fetched pages linking to the URL)
    "irr_in",  # log1p(irrelevant fetched pages linking to the URL)
    "block_yield",  # smoothed share of relevant pages among the judged siblings (same block)
    "arm_yield",  # the same over the (host, block signature) arm
    "host_yield",  # the same over the target's host
    "noise",  # the link is in a navigation / noise block or a template link
)
N_NUMERIC = len(NUMERIC)
MAX_CONTEXT_WORDS = 12  # of the link context, the first distinct words
MAX_WORDS = 16  # of anchor and URL path together
POSITIONS = 4  # a block's position on its page: quarter of the page's blocks

_SALT = {kind: zlib.crc32(kind.encode()) for kind in ("a", "c", "h", "b", "hb", "pk", "pb", "nt")}


class LinkFeaturizer:
    """Hashed feature ids of links; word hashes are cached (bounded)."""

    def __init__(self, bits: int = 18, max_cache: int = 200_000) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.max_cache = max_cache
        self._words: dict[str, int] = {}
        self._path_cache: dict[str, tuple[str, list[str]]] = {}
        # the word ids of a link (anchor, URL words, context): links repeat across pages
        self._word_ids: dict[tuple[str, str, str], list[int]] = {}

    def _h(self, word: str) -> int:
        h = self._words.get(word)
        if h is None:
            if len(self._words) >= self.max_cache:
                self._words.clear()
            h = self._words[word] = zlib.crc32(word.encode())
        return h

    def _id(self, h: int, kind: str) -> int:
        # multiplicative mixing of the word's hash with the kind's salt; never 0 (padding)
        return ((h ^ _SALT[kind]) * 2654435761 >> 7) & self.mask or 1

    def host_and_words(self, url: str) -> tuple[str, list[str]]:
        """The URL's host and its path's words (cached: a URL is found on many pages)."""
        got = self._path_cache.get(url)
        if got is None:
            if len(self._path_cache) >= self.max_cache:
                self._path_cache.clear()
            parts = urlsplit(url)
            got = self._path_cache[url] = (parts.hostname or "", path_words(parts.path))
        return got

    def page_ids(self, page_kind: str, band: int) -> tuple[int, int]:
        """The ids of the linking page's kind and of its relevance band (crossed later)."""
        return self._h(page_kind), band

    def link_ids(
        self,
        link: Link,
        host: str,
        url_words: list[str],
        signature: str,
        page_kind_hash: int,
        band: int,
    ) -> list[int]:
        """The hashed feature ids of one link (distinct, at most a few dozen)."""
        h, mk = self._h, self._id
        key = (link.anchor, link.url, link.context)
        words_ids = self._word_ids.get(key)
        if words_ids is None:
            words_ids = []
            words = fast_tokens(link.anchor)[:MAX_WORDS] if link.anchor else []
            # anchor and URL words share one kind: on most sites they say the same thing
            for w in dict.fromkeys(words + url_words[: MAX_WORDS - len(words)]):
                words_ids.append(mk(h(w), "a"))
            if link.context:
                for w in list(dict.fromkeys(fast_tokens(link.context)))[:MAX_CONTEXT_WORDS]:
                    words_ids.append(mk(h(w), "c"))
            if len(self._word_ids) >= self.max_cache:
                self._word_ids.clear()
            self._word_ids[key] = words_ids
        ids = list(words_ids)
        hh = h(host)
        sh = h(signature)
        ids.append(mk(hh, "h"))
        ids.append(mk(sh, "b"))
        ids.append(mk(hh * 31 + sh, "hb"))
        ids.append(mk(page_kind_hash * 31 + sh, "pk"))
        ids.append(mk(sh * 7 + band, "pb"))
        ids.append(mk(int(link.noise) * 2 + int(link.template), "nt"))
        return ids


def block_signatures(page: Page) -> dict[int, str]:
    """Per block id, its signature: kind, tag, noise cue and position band on the page."""
    n = len(page.blocks) or 1
    out: dict[int, str] = {}
    for i, block in enumerate(page.blocks):
        out[block.id] = signature(block, POSITIONS * i // n)
    return out


def signature(block: Block | None, position: int) -> str:
    if block is None:
        return f"none|{position}"
    return f"{block.kind}|{block.tag}|{block.noise_cue}|{position}"
