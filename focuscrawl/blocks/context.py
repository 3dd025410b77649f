"""ζ-IDOM link contexts: the text around an anchor inside its aggregation node.

From the anchor, climb ζ element levels up the DOM to the *aggregation node*; the context is the
text of that node around the anchor, at most ``window`` words on either side (the anchor's own
words are left out: :attr:`Link.anchor` holds them). ζ = 0 gives an empty context; a large ζ
reaches the whole page and the window alone bounds the context.

The walk (:mod:`segment`) records word spans, so a context is two list slices: no second pass
over the tree and no per-link ``text_content()``.
"""

from __future__ import annotations


def link_context(
    words: list[str], anchor: tuple[int, int], node: tuple[int, int], window: int
) -> str:
    """Words of ``node``'s span around ``anchor``'s span, ``window`` of them on each side."""
    a0, a1 = anchor
    n0, n1 = node
    if window <= 0:
        return ""
    before = words[max(n0, a0 - window) : a0]
    after = words[a1 : min(n1, a1 + window)]
    if before and after:
        return " ".join(before) + " " + " ".join(after)
    return " ".join(before or after)
