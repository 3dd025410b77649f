"""The walk's class/id word matcher: the prefix-factored pattern finds what the plain one does."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.blocks import rules
from focuscrawl.blocks.caches import WORDS_RE
from focuscrawl.blocks.sheet import trie_pattern

_EVERY = sorted(
    {
        w
        for words in (
            rules.NEGATIVE_WORDS,
            rules.POSITIVE_WORDS,
            rules.UNLIKELY_WORDS,
            rules.MAYBE_CANDIDATE_WORDS,
        )  # fmt: skip
        for w in words
    },
    key=len,
    reverse=True,
)
_PLAIN = re.compile("|".join(map(re.escape, _EVERY)))  # longest first: the reference


def test_trie_pattern_prefers_the_longer_word() -> None:
    pattern = re.compile(trie_pattern(["foot", "footer", "ad"]))
    assert pattern.findall("x-footer foot ad-footnote") == ["footer", "foot", "ad", "foot"]


# Class values made of rule words, their fragments and separators: the cases that can differ.
_pieces = (
    st.sampled_from(_EVERY)
    | st.sampled_from([w[:3] for w in _EVERY])
    | st.sampled_from([" ", "-", "_", "x", "er", "s"])
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=8).map("".join))
def test_trie_pattern_matches_like_the_longest_first_alternation(value: str) -> None:
    assert WORDS_RE.findall(value) == _PLAIN.findall(value)
