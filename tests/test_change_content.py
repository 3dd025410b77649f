"""The content change detection compares: normalisation, masks, page chrome, the stored record."""

from __future__ import annotations

import pytest

from focuscrawl.blocks.model import Block, Link, Page
from focuscrawl.change.content import (
    Content,
    chrome_blocks,
    content_of,
    content_of_text,
    normalise,
    normalise_all,
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Preis 1,00\u00a0€", "Preis 1,00 €"),  # a non-breaking space that became a space
        ("Modell \uff11\uff12", "Modell 12"),  # full-width digits
        ("Gulasch\u00adprogrammiernacht", "Gulaschprogrammiernacht"),  # soft hyphen
        ("zero\u200bwidth", "zerowidth"),
        ("Updated 5 minutes ago", "Updated 17 minutes ago"),
        ("Aktualisiert vor 3 Stunden", "Aktualisiert vor 12 Stunden"),
        ("Generated at 12:01:07 by node", "Generated at 23:59:58 by node"),
        ("as of 2025-04-25T00:20:01Z", "as of 2025-04-26T08:02:11+02:00"),
        ("chart visualizer-235-94087244", "chart visualizer-235-11873002"),
        ("request req-1234567890.", "request req-9876543210."),
        ("id 0b7e7c1e-41d2-4b8a-9f7e-0c2b9a1d3e4f", "id 9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"),
        ("hash 9f86d081884c7d65", "hash 2c26b46b68ffc68f"),
        ("nonce (dGhpcyBpcyBhIG5vbmNl9Z)", "nonce (QW5vdGhlciBub25jZTk4Nz)"),
        ("  two   spaces ", "two spaces"),
    ],
)
def test_what_a_reader_cannot_see_is_normalised_away(old: str, new: str) -> None:
    assert normalise(old) == normalise(new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("mehr Details", "Mehr Details"),  # case is visible
        ("erweiterbar.", "erweiterbar.'"),  # so is punctuation
        ("1,00€ pro Monat", "2,00€ pro Monat"),
        ("10GB", "12GB"),
        ("r817-battery", "rk817-battery"),  # a product name, not an id
        ("BalCCon2k23", "BalCCon2k24"),
        ("Fiscal year FY2024", "Fiscal year FY2025"),
        ("Doors open 19:30", "Doors open 20:00"),  # a schedule: no seconds, not a clock
        ("March 31, 2025", "April 30, 2025"),  # dates are content
        ("Order 12345", "Order 12346"),
    ],
)
def test_what_a_reader_sees_is_kept(old: str, new: str) -> None:
    assert normalise(old) != normalise(new)


def test_dates_are_masked_only_when_asked() -> None:
    a, b = "Updated Wednesday, April 23, 2025", "Updated Thursday, April 24, 2025"
    assert normalise(a) != normalise(b)
    assert normalise(a, mask_dates=True) == normalise(b, mask_dates=True)


def test_normalise_all_keeps_one_line_per_text() -> None:
    texts = ["a\nb", "", "c  d", "\u00a0e", "15:04:05 f"]
    assert normalise_all(texts) == ["a b", "", "c d", "e", "<time> f"]
    assert normalise_all(texts) == [normalise(t) for t in texts]


def _page(*blocks: tuple[str, float, str], title: str = "T") -> Page:
    page = Page(url="http://x/", title=title)
    for i, (kind, weight, text) in enumerate(blocks):
        page.blocks.append(Block(i, kind, text, weight))  # type: ignore[arg-type]
    return page


def test_chrome_is_the_cue_marked_edge_of_the_page() -> None:
    page = _page(
        ("noise", 0.05, "Home About Shop"),  # menu before the content
        ("text", 0.9, "The article."),
        ("noise", 0.05, "9,99 €"),  # cue-marked, but between content blocks: a card footer
        ("noise", 0.0, "hidden"),
        ("noise", 0.15, "A data table outside the article"),
        ("noise", 0.05, "Copyright 2025"),  # footer after the content
        ("noise", 0.05, "We use cookies"),
    )
    assert chrome_blocks(page) == {0, 3, 5, 6}
    texts = [t for _, t in content_of(page).lines]
    assert texts == ["T", "The article.", "9,99 €", "A data table outside the article"]


def test_a_page_of_cue_marked_blocks_only_is_all_content() -> None:
    page = _page(("noise", 0.05, "RS 1000"), ("noise", 0.05, "9,81€"))
    assert chrome_blocks(page) == set()
    assert len(content_of(page).lines) == 3


def test_items_are_the_content_links() -> None:
    page = _page(("noise", 0.05, "Home"), ("link", 0.6, "Post one Post two"))
    page.links = [
        Link("http://x/", "Home", block_id=0, noise=True),
        Link("http://x/1", "Post one", block_id=1),
        Link("http://x/2", "Post two", block_id=1),
        Link("http://x/2", "Post two", block_id=1),  # the same item twice counts once
        Link("http://x/out", "Floating", block_id=-1),  # in no block
    ]
    assert content_of(page).items == [("Post one", "http://x/1"), ("Post two", "http://x/2")]


def test_digest_ignores_block_boundaries_and_the_cap_keeps_it_whole() -> None:
    one = _page(("text", 0.9, "alpha beta gamma"))
    two = _page(("text", 0.9, "alpha beta"), ("text", 0.9, "gamma"))
    assert content_of(one).digest == content_of(two).digest
    long = _page(*[("text", 0.9, f"paragraph {i} " * 20) for i in range(50)])
    capped = content_of(long, max_chars=1000)
    assert capped.truncated and sum(len(t) for _, t in capped.lines) <= 1000
    assert capped.digest == content_of(long).digest
    assert content_of(Page(url="u", error="binary")).lines == []


def test_content_record_round_trips_and_refuses_garbage() -> None:
    content = content_of_text("Title", "First line.\nSecond – line, 1,00\u00a0€.")
    assert [t for _, t in content.lines] == ["Title", "First line.", "Second – line, 1,00 €."]
    assert Content.unpack(content.pack()) == content
    for bad in ("", "not base64!", "aGVsbG8="):
        with pytest.raises(ValueError):
            Content.unpack(bad)


def test_empty_inputs() -> None:
    assert normalise_all([]) == []
    assert normalise("") == ""
    empty = content_of(Page(url="http://x/"))
    assert empty.lines == [] and empty.items == [] and empty.digest
