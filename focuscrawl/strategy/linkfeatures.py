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
from collections.abc import Callable
from functools import partial
from urllib.parse import urlsplit

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.strategy.compiled import cjudge
from focuscrawl.strategy.linklearner import path_words
from focuscrawl.strategy.linkshape import anchor_shape
from focuscrawl.text import STOPWORDS, WORD_EDGES, fast_tokens

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

_SALT = {
    kind: zlib.crc32(kind.encode()) for kind in ("a", "c", "h", "b", "hb", "pk", "pb", "nt", "s")
}


class LinkFeaturizer:
    """Hashed feature ids of links; word hashes are cached (bounded)."""

    def __init__(
        self,
        bits: int = 18,
        max_cache: int = 200_000,
        shape: bool = False,
        compiled: bool | None = None,
    ) -> None:
        """``shape``: the anchor's shape (:func:`~.linkshape.anchor_shape`) as features too;
        ``compiled``: the link contexts' loop compiled (``_cjudge.ContextIds``; None: when it is
        built, False: the pure-Python twin :func:`context_word_ids_python`, the same ids)."""
        self.bits = bits
        self.shape = shape
        self.mask = (1 << bits) - 1
        self.max_cache = max_cache
        self._words: dict[str, int] = {}
        # (the caches hold tuples, not lists: a tuple of ints or strings leaves the garbage
        # collector's care at its first collection, so tens of thousands of cached entries do
        # not bring on full collections that walk the whole heap)
        self._path_cache: dict[str, tuple[str, tuple[str, ...]]] = {}
        # the anchor and URL word ids of a link: links repeat across pages
        self._word_ids: dict[tuple[str, str], tuple[int, ...]] = {}
        self._struct_ids: dict[tuple[str, str, int, int, int], tuple[int, ...]] = {}
        self._aid: dict[str, int] = {}  # word → its id as an anchor / URL word
        self._cid: dict[str, int] = {}  # word → its id as a context word
        self._raw_cid: dict[str, tuple[str, int]] = {}  # raw context token → (word, id)
        fast = cjudge() if compiled is not False else None
        if compiled and fast is None:
            raise RuntimeError("focuscrawl.strategy._cjudge is not built (pip install -e .)")
        args = (WORD_EDGES, STOPWORDS, _SALT["c"], self.mask, MAX_CONTEXT_WORDS, max_cache)
        self._context_word_ids: Callable[[str], list[int]] = (
            fast.ContextIds(*args).ids
            if fast is not None
            else partial(_context_word_ids, self._cid, *args, self._raw_cid)
        )

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

    def host_and_words(self, url: str) -> tuple[str, tuple[str, ...]]:
        """The URL's host and its path's words (cached: a URL is found on many pages)."""
        got = self._path_cache.get(url)
        if got is None:
            if len(self._path_cache) >= self.max_cache:
                self._path_cache.clear()
            parts = urlsplit(url)
            got = self._path_cache[url] = (parts.hostname or "", tuple(path_words(parts.path)))
        return got

    def page_ids(self, page_kind: str, band: int) -> tuple[int, int]:
        """The ids of the linking page's kind and of its relevance band (crossed later)."""
        return self._h(page_kind), band

    def link_ids(
        self,
        link: Link,
        host: str,
        url_words: tuple[str, ...],
        signature: str,
        page_kind_hash: int,
        band: int,
    ) -> list[int]:
        """The hashed feature ids of one link (distinct, at most a few dozen): its anchor and
        URL word ids (cached per anchor and URL), its context's word ids and its structural ids (cached per host, block
        signature, page kind, band and noise flags: a few hundred distinct tuples a crawl)."""
        key = (link.anchor, link.url)
        anchor_ids = self._word_ids.get(key)
        if anchor_ids is None:
            anchor_ids = tuple(self._anchor_word_ids(link, url_words))
            if len(self._word_ids) >= self.max_cache:
                self._word_ids.clear()
            self._word_ids[key] = anchor_ids
        # (a context's ids are not cached: the judge featurises a link's first in-link only, and
        # the contexts of those seldom repeat — 0.6 % of a Wikispeedia crawl's, 14 % of a
        # dressed one's)
        context_ids = self._context_word_ids(link.context) if link.context else ()
        skey = (host, signature, page_kind_hash, band, int(link.noise) * 2 + int(link.template))
        struct = self._struct_ids.get(skey)
        if struct is None:
            h, mk = self._h, self._id
            hh = h(host)
            sh = h(signature)
            struct = (
                mk(hh, "h"),
                mk(sh, "b"),
                mk(hh * 31 + sh, "hb"),
                mk(page_kind_hash * 31 + sh, "pk"),
                mk(sh * 7 + band, "pb"),
                mk(skey[4], "nt"),
            )
            if len(self._struct_ids) >= self.max_cache:
                self._struct_ids.clear()
            self._struct_ids[skey] = struct
        return [*anchor_ids, *context_ids, *struct]

    def _kind_id(self, cache: dict[str, int], word: str, kind: str) -> int:
        i = cache.get(word)
        if i is None:
            if len(cache) >= self.max_cache:
                cache.clear()
            i = cache[word] = self._id(zlib.crc32(word.encode()), kind)
        return i

    def _anchor_word_ids(self, link: Link, url_words: tuple[str, ...]) -> list[int]:
        """Anchor and URL words (one kind: on most sites they say the same thing); a word's id
        is cached per kind."""
        aid, kid = self._aid, self._kind_id
        words = fast_tokens(link.anchor)[:MAX_WORDS] if link.anchor else []
        out = []
        for w in dict.fromkeys([*words, *url_words[: MAX_WORDS - len(words)]]):
            i = aid.get(w)
            out.append(i if i is not None else kid(aid, w, "a"))
        if self.shape:
            out += [self._id(self._h(f), "s") for f in anchor_shape(link.anchor, link.url)]
        return out


def _context_word_ids(
    word_ids: dict[str, int],
    edges: str,
    stop: frozenset[str],
    salt: int,
    mask: int,
    limit: int,
    max_cache: int,
    raw_ids: dict[str, tuple[str, int]],
    context: str,
) -> list[int]:
    """:func:`context_word_ids_python` with the context last (a featuriser's partial)."""
    return context_word_ids_python(
        context, word_ids, edges, stop, salt, mask, limit, max_cache, raw_ids
    )


def context_word_ids_python(
    context: str,
    word_ids: dict[str, int],
    edges: str,
    stop: frozenset[str],
    salt: int,
    mask: int,
    limit: int,
    max_cache: int,
    raw_ids: dict[str, tuple[str, int]] | None = None,
) -> list[int]:
    """The ids of the first ``limit`` distinct words of a link context (the words of
    ``first_distinct_tokens(context, limit)``, each hashed as a context word), a word's id
    memoised in ``word_ids`` and a raw token's word and id in ``raw_ids`` (each cleared past
    ``max_cache``; most raw tokens recur across a crawl). ``_cjudge.ContextIds`` gives the
    same ids, compiled (it finds the words on the string and looks them up by their
    characters: no raw-token memo, no string for a word seen before)."""
    if raw_ids is None:
        raw_ids = {}
    if len(raw_ids) >= max_cache:
        raw_ids.clear()
    out: list[int] = []
    seen: dict[str, None] = {}
    for raw in context.lower().split():
        got = raw_ids.get(raw)
        if got is None:
            w = raw.strip(edges)
            if len(w) > 1 and w[0].isalpha() and w not in stop:
                i = word_ids.get(w)
                if i is None:
                    if len(word_ids) >= max_cache:
                        word_ids.clear()
                    i = word_ids[w] = (
                        (zlib.crc32(w.encode()) ^ salt) * 2654435761 >> 7
                    ) & mask or 1
                got = (w, i)
            else:
                got = ("", 0)
            raw_ids[raw] = got
        w = got[0]
        if w and w not in seen:
            seen[w] = None
            out.append(got[1])
            if len(seen) >= limit:
                break
    return out


def first_distinct_tokens(text: str, n: int) -> list[str]:
    """``list(dict.fromkeys(fast_tokens(text)))[:n]``, stopping at the ``n``-th distinct word
    (a link context has ~40 words, the judge reads its first 12 distinct ones)."""
    out: dict[str, None] = {}
    for raw in text.lower().split():
        w = raw.strip(WORD_EDGES)
        if len(w) > 1 and w[0].isalpha() and w not in STOPWORDS:
            out[w] = None
            if len(out) >= n:
                break
    return list(out)


def block_signatures(page: Page) -> dict[int, str]:
    """Per block id, its signature: kind, tag, noise cue and position band on the page."""
    n = len(page.blocks) or 1
    out: dict[int, str] = {}
    for i, block in enumerate(page.blocks):
        out[block.id] = signature(block, POSITIONS * i // n)
    return out


class PageSignatures:
    """``block_signatures(page).get(block_id) or signature(None, 0)``, each block's signature
    made when first asked for (a page's followed links sit in a few of its ~60 blocks)."""

    __slots__ = ("_blocks", "_n", "_index", "_got")

    def __init__(self, page: Page) -> None:
        blocks = page.blocks
        self._blocks = blocks
        self._n = len(blocks) or 1
        # a partitioned page numbers its blocks in order (id = index): no map needed
        in_order = all(block.id == i for i, block in enumerate(blocks))
        self._index = None if in_order else {block.id: i for i, block in enumerate(blocks)}
        self._got: dict[int, str] = {}

    def get(self, block_id: int) -> str:
        got = self._got.get(block_id)
        if got is None:
            if self._index is None:
                i = block_id if 0 <= block_id < len(self._blocks) else None
            else:
                i = self._index.get(block_id)
            if i is None:
                got = signature(None, 0)
            else:
                got = signature(self._blocks[i], POSITIONS * i // self._n)
            self._got[block_id] = got
        return got


def signature(block: Block | None, position: int) -> str:
    if block is None:
        return f"none|{position}"
    return f"{block.kind}|{block.tag}|{block.noise_cue}|{position}"
