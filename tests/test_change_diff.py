"""The bounded two-level diff: opcodes, fragments, moves, items, caps."""

from __future__ import annotations

import random

from focuscrawl.change.content import Content
from focuscrawl.change.diff import MAX_FRAGMENT_CHARS, MAX_FRAGMENTS, diff_content, opcodes


def apply(a: list[str], b: list[str]) -> list[str]:
    """``a`` with the opcodes of (a, b) applied: must give ``b`` back."""
    out: list[str] = []
    at = 0
    for _, i1, i2, j1, j2 in opcodes(a, b):
        out.extend(a[at:i1])
        out.extend(b[j1:j2])
        at = i2
    return out + a[at:]


def test_opcodes_rebuild_the_new_sequence() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = [rng.choice("abcdefghij") for _ in range(rng.randrange(0, 40))]
        b = list(a)
        for _ in range(rng.randrange(0, 6)):
            op = rng.random()
            at = rng.randrange(0, len(b) + 1)
            if op < 0.4:
                b.insert(at, rng.choice("abcdefghijxyz"))
            elif op < 0.7 and b:
                del b[min(at, len(b) - 1)]
            elif b:
                b[min(at, len(b) - 1)] = rng.choice("xyz")
        assert apply(a, b) == b


def test_opcodes_find_the_small_edit_in_a_long_sequence() -> None:
    a = [f"w{i}" for i in range(100_000)]
    b = ["new", *a[:50_000], "inserted", *a[50_001:], "end"]  # three edits, far apart
    ops = opcodes(a, b)
    assert ops == [
        ("insert", 0, 0, 0, 1),
        ("replace", 50_000, 50_001, 50_001, 50_002),
        ("insert", 100_000, 100_000, 100_001, 100_002),
    ]


def test_opcodes_on_sequences_without_anchors_stay_correct() -> None:
    a = ["x", "y"] * 5_000  # no element occurs once: the range is reported replaced
    b = ["y", "x"] * 5_000
    assert apply(a, b) == b


def lines(*texts: str, kind: str = "text") -> Content:
    return Content([(kind, t) for t in texts])


def test_inserted_sentence_and_changed_number_are_fragments() -> None:
    old = lines("Intro.", "The price is 1,00 € per month.", "Outro.")
    new = lines("Intro.", "The price is 2,00 € per month. Now with IPv6.", "Outro.")
    d = diff_content(old, new)
    assert d.removed == ["1,00"]
    assert d.added == ["2,00", "Now with IPv6."]
    assert not d.moved_only and d.changed_tokens == 5 and d.kinds == ["text"]


def test_a_moved_item_is_a_move_and_a_swapped_label_is_an_edit() -> None:
    items = ["Camp A 1. Mai Berlin", "Congress B 3. Mai Hamburg", "Meetup C 9. Mai Köln"]
    moved = diff_content(lines(*items), lines(items[1], items[0], items[2]))
    assert moved.moved_only and moved.moved and not (moved.added or moved.removed)
    # two products swap their button labels: same words, but replaced in place
    old = lines("ROCK64 $ 32.00 Add to cart", "PINE H64 $ 79.99 Read more")
    new = lines("ROCK64 $ 32.00 Read more", "PINE H64 $ 79.99 Add to cart")
    swapped = diff_content(old, new)
    assert not swapped.moved_only
    assert swapped.removed == ["Add to cart", "Read more"]
    assert swapped.added == ["Read more", "Add to cart"]


def test_a_block_moved_whole_beside_an_edit_is_shown_as_moved() -> None:
    old = lines("Alpha item one.", "Beta item two.", "Gamma item three.", "Price 5 €.")
    new = lines("Beta item two.", "Gamma item three.", "Alpha item one.", "Price 6 €.")
    d = diff_content(old, new)
    assert d.moved == ["Alpha item one."]
    assert d.removed == ["5"] and d.added == ["6"]


def test_items_added_and_removed() -> None:
    old = Content([("link", "Post one Post two")], [("Post one", "/1"), ("Post two", "/2")])
    new = Content([("link", "Post zero Post one")], [("Post zero", "/0"), ("Post one", "/1")])
    d = diff_content(old, new)
    assert d.items_added == [("Post zero", "/0")]
    assert d.items_removed == [("Post two", "/2")]
    assert d.kinds == ["link"]


def test_fragments_are_bounded() -> None:
    old = lines(*[f"line {i} stays" for i in range(100)])
    new = lines(*[f"line {i} stays " + "changed " * 80 for i in range(100)])
    d = diff_content(old, new)
    assert len(d.added) == MAX_FRAGMENTS
    assert all(len(f) <= MAX_FRAGMENT_CHARS for f in d.added)
    assert d.added[0].endswith("…")
    assert d.changed_tokens == 100 * 80  # counted in full, though shown capped
