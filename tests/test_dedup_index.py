"""The near-duplicate index: bands, distances, exact copies, bounds; fingerprints of texts."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.change.simhash import hamming
from focuscrawl.dedup import NearDuplicateIndex, TextPrint, text_print
from focuscrawl.dedup.fingerprint import MAX_CHARS, pair_simhash, words_of
from focuscrawl.dedup.index import MAX_BITS, VECTOR_FROM, bands
from focuscrawl.dedup.pages import DuplicatePages


def fp(simhash: int, digest: int = 0) -> TextPrint:
    return TextPrint(simhash, digest or simhash, 100)


def flip(x: int, n: int, rng: random.Random) -> int:
    for bit in rng.sample(range(64), n):
        x ^= 1 << bit
    return x


@pytest.mark.parametrize("bits", range(MAX_BITS + 1))
def test_bands_cover_the_64_bits_once(bits: int) -> None:
    cut = bands(bits)
    assert len(cut) == bits + 1
    assert sum(width for _, width in cut) == 64
    assert [shift for shift, _ in cut] == [sum(w for _, w in cut[:i]) for i in range(len(cut))]


@pytest.mark.parametrize("bits", [1, 3, 4, 6])
def test_finds_every_page_within_k_bits_and_none_beyond(bits: int) -> None:
    rng = random.Random(bits)
    index = NearDuplicateIndex(bits)
    stored = [rng.getrandbits(64) for _ in range(300)]
    for n, x in enumerate(stored):
        index.add(f"http://ex.test/{n}", fp(x))
    for trial in range(600):
        base = rng.randrange(len(stored))
        probe = flip(stored[base], trial % (bits + 3), rng)
        expected = min(
            ((hamming(probe, x), i) for i, x in enumerate(stored) if hamming(probe, x) <= bits),
            default=None,
        )
        match = index.find(fp(probe, digest=1))
        if expected is None:
            assert match is None
        else:
            assert match is not None
            assert (match.distance, match.url) == (expected[0], f"http://ex.test/{expected[1]}")


def test_a_crowded_bucket_is_compared_at_once_with_the_same_answers() -> None:
    rng = random.Random(5)
    index = NearDuplicateIndex(3)
    stored = [rng.getrandbits(48) << 16 | 0xABCD for _ in range(VECTOR_FROM * 8)]  # one band
    for n, x in enumerate(stored):
        index.add(f"http://ex.test/{n}", fp(x))
    for trial in range(300):
        probe = flip(stored[trial % len(stored)], trial % 6, rng)
        near = [i for i, x in enumerate(stored) if hamming(probe, x) <= 3]
        match = index.find(fp(probe, digest=1))
        assert (match is not None) == bool(near)
        if match is not None:
            best = min(hamming(probe, stored[i]) for i in near)
            first = min(i for i in near if hamming(probe, stored[i]) == best)
            assert match.url == f"http://ex.test/{first}"
    index.add("http://ex.test/after", fp(0xABCD))  # the arrays can still grow


def test_the_closest_then_the_first_page_is_the_original() -> None:
    index = NearDuplicateIndex(3)
    index.add("http://a.test/first", fp(0b1110))
    index.add("http://a.test/second", fp(0b1110))
    index.add("http://a.test/closer", fp(0b0001), relevance=0.75)
    assert index.find(fp(0b1110)).url == "http://a.test/first"  # type: ignore[union-attr]
    match = index.find(fp(0b0011, digest=9))
    assert match is not None
    assert (match.url, match.distance, match.exact, match.relevance) == (
        "http://a.test/closer",
        1,
        False,
        0.75,
    )


def test_zero_bits_finds_exact_copies_only() -> None:
    index = NearDuplicateIndex(0)
    index.add("http://a.test/", TextPrint(42, 7, 50))
    assert index.find(TextPrint(42, 8, 50)) is None  # same simhash, other text
    assert index.find(TextPrint(43, 7, 50)) is None
    match = index.find(TextPrint(42, 7, 50))
    assert match is not None and match.exact and match.distance == 0


def test_memory_is_bounded_and_stated_per_page() -> None:
    index = NearDuplicateIndex(3, max_pages=10)
    for n in range(15):
        added = index.add(f"http://ex.test/{n:03d}", fp(n * 0x9E3779B97F4A7C15 % 2**64))
        assert added == (n < 10)
    assert len(index) == 10 and index.full
    url_bytes = len("http://ex.test/000")
    assert index.bytes_per_page() == 8 + 8 + 4 + 8 + 4 * 4 + url_bytes
    assert index.find(fp(14 * 0x9E3779B97F4A7C15 % 2**64)) is None  # never added
    assert index.url(9) == "http://ex.test/009"


def test_urls_with_any_characters_round_trip() -> None:
    index = NearDuplicateIndex(3)
    odd = ["http://ex.test/ü/ß?q=✓", "http://ex.test/\udcff", ""]
    for n, url in enumerate(odd):
        index.add(url, fp(n << 20 | 1 << n))
    assert [index.url(i) for i in range(3)] == odd


def test_bits_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError):
        NearDuplicateIndex(MAX_BITS + 1)


ARTICLE = " ".join(
    f"The {w} of the river valley shelters {n} pairs of herons every spring."
    for n, w in enumerate(["marsh", "wood", "reed bed", "bank", "delta", "meadow", "island"] * 6)
)


def test_a_changed_date_line_stays_near_and_another_article_is_far() -> None:
    original = text_print("Published on March 3, 2024\n" + ARTICLE)
    dated = text_print("Published on June 17, 2025\n" + ARTICLE)
    assert hamming(original.simhash, dated.simhash) == 0  # dates are masked
    assert original.digest != dated.digest  # but it is not the exact same text
    updated = text_print("Updated on June 17, 2025\n" + ARTICLE)
    assert hamming(original.simhash, updated.simhash) <= 4
    other = text_print(ARTICLE.replace("herons", "otters").replace("spring", "winter"))
    assert hamming(original.simhash, other.simhash) > 8
    assert (
        text_print("  A  text\n" + ARTICLE.upper()).digest == text_print("a text " + ARTICLE).digest
    )  # whitespace and case do not make another text


_TOKENS = st.sampled_from(
    ["heron", "Heron", "herons,", "(marsh", "march", "March.", "21st", "2024", "12:30", "—", "...",
     "0xdeadbeef12345", "x-ray", "İstanbul", "ß", "ﬁsh", "a\x00b", "\u00a0", "«on»", "co-op's",
     "2025-04-25t00:20:01z", "123456789012", "don't", "4.55%", "$12", "<n>"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=60), st.lists(st.sampled_from([" ", "\n", "\t", "  "])))
def test_the_fingerprint_is_the_simhash_of_the_readable_word_pairs(words, spaces) -> None:
    # text_print takes each distinct token through the term rules and the mask once: the same
    # words, the same pairs, the same simhash and count as words_of + pair_simhash per word
    text = "".join(w + (spaces[i % len(spaces)] if spaces else " ") for i, w in enumerate(words))
    expected = words_of(text)
    got = text_print(text)
    assert (got.simhash, got.words) == (pair_simhash(expected), len(expected))


def test_a_huge_text_is_fingerprinted_on_its_head() -> None:
    huge = ARTICLE * (MAX_CHARS // len(ARTICLE) + 5)
    assert text_print(huge) == text_print(huge[:MAX_CHARS])


def test_duplicate_pages_leave_thin_texts_alone() -> None:
    pages = DuplicatePages(bits=4, min_words=20)
    assert pages.check("Loading ...") == (None, None)
    match, first = pages.check(ARTICLE)
    assert match is None and first is not None
    pages.remember("http://a.test/1", first, 0.5)
    match, _ = pages.check("Updated today\n" + ARTICLE)
    assert match is not None and match.url == "http://a.test/1" and match.relevance == 0.5
