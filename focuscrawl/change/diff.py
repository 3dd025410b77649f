"""What changed between two versions' :class:`~focuscrawl.change.content.Content`, bounded.

Two levels of a patience diff (the one git offers as ``--patience``): first over the blocks'
lines, then over the tokens of the runs of lines that differ. Each level strips the common
prefix and suffix, anchors on the tokens that occur once on each side (longest increasing
subsequence) and recurses between anchors; a range without such anchors is reported as replaced.
Work is capped at a multiple of the input (:data:`WORK_FACTOR`), after which what is left is
reported as replaced: the diff of two 200 KB pages is linear, never a product of their lengths.

A re-ordering is told apart from an edit: the change is a *move* when the tokens deleted at
some places are the tokens inserted at others (same multiset) and no range was replaced in
place by other words. "A beat B" → "B beat A" is an edit (two words replaced in place); a list
item moved down is a move. No Scrapy.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from focuscrawl.change.content import Content

MAX_FRAGMENTS = 20  # per list (added, removed, moved, items)
MAX_FRAGMENT_CHARS = 200
WORK_FACTOR = 4  # elements visited per element of input, at most (plus a constant)

Op = tuple[str, int, int, int, int]  # ("replace" | "delete" | "insert", i1, i2, j1, j2)


def _anchors(
    a: Sequence[Hashable], alo: int, ahi: int, b: Sequence[Hashable], blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Pairs (i, j) of elements unique in both ranges, the longest run increasing in both."""
    ca = Counter(a[alo:ahi])
    cb = Counter(b[blo:bhi])
    where_b = {b[j]: j for j in range(blo, bhi) if cb[b[j]] == 1 and ca.get(b[j]) == 1}
    if not where_b:
        return []
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if a[i] in where_b]
    # longest increasing subsequence of the j's (patience sorting with back-pointers)
    tails: list[int] = []  # j of the last pair of the best run of each length
    tail_at: list[int] = []  # index in pairs of that pair
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pos = bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
        back[k] = tail_at[pos - 1] if pos else -1
    out: list[tuple[int, int]] = []
    k = tail_at[-1]
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    out.reverse()
    return out


def opcodes(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Op]:
    """The differing ranges of ``a`` and ``b`` in order (equal ranges left out)."""
    budget = WORK_FACTOR * (len(a) + len(b)) + 1000
    out: list[Op] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            alo += 1
            blo += 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi -= 1
            bhi -= 1
        if alo == ahi and blo == bhi:
            continue
        if alo == ahi or blo == bhi:
            out.append(("insert" if alo == ahi else "delete", alo, ahi, blo, bhi))
            continue
        budget -= (ahi - alo) + (bhi - blo)
        anchors = _anchors(a, alo, ahi, b, blo, bhi) if budget > 0 else []
        if not anchors:
            out.append(("replace", alo, ahi, blo, bhi))
            continue
        # ranges between anchors, pushed in reverse so they pop in document order
        bounds = [(alo - 1, blo - 1), *anchors, (ahi, bhi)]
        for (i0, j0), (i1, j1) in reversed(list(zip(bounds, bounds[1:], strict=False))):
            stack.append((i0 + 1, i1, j0 + 1, j1))
    out.sort(key=lambda op: (op[1], op[3]))
    return out


@dataclass(slots=True)
class ContentDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)
    items_added: list[tuple[str, str]] = field(default_factory=list)
    items_removed: list[tuple[str, str]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # block kinds where words changed or moved
    changed_tokens: int = 0  # tokens added + removed, moves not counted
    moved_only: bool = False  # the same words, re-ordered
    beyond_cap: bool = False  # the stored text was capped: a change may lie past it


def _fragment(tokens: Sequence[str]) -> str:
    text = " ".join(tokens)
    return text if len(text) <= MAX_FRAGMENT_CHARS else text[: MAX_FRAGMENT_CHARS - 1] + "…"


def _tokens_with_kinds(lines: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    tokens: list[str] = []
    kinds: list[str] = []
    for kind, text in lines:
        words = text.split()
        tokens.extend(words)
        kinds.extend([kind] * len(words))
    return tokens, kinds


def diff_content(old: Content, new: Content) -> ContentDiff:
    """Added, removed and moved fragments, items and block kinds from ``old`` to ``new``."""
    out = ContentDiff(beyond_cap=old.truncated or new.truncated)
    edits: list[tuple[list[str], list[str]]] = []  # words replaced in place by other words
    deletes: list[list[str]] = []  # runs deleted (or moved away)
    inserts: list[list[str]] = []  # runs inserted (or moved here)
    permuted: list[list[str]] = []  # runs whose words were only re-ordered in place
    kinds: set[str] = set()
    lines_a = [t for _, t in old.lines]
    lines_b = [t for _, t in new.lines]
    for _, i1, i2, j1, j2 in opcodes(lines_a, lines_b):
        ta, ka = _tokens_with_kinds(old.lines[i1:i2])
        tb, kb = _tokens_with_kinds(new.lines[j1:j2])
        for tag, a1, a2, b1, b2 in opcodes(ta, tb):
            gone, come = ta[a1:a2], tb[b1:b2]
            kinds.update(ka[a1:a2])
            kinds.update(kb[b1:b2])
            if tag == "delete":
                deletes.append(gone)
            elif tag == "insert":
                inserts.append(come)
            elif Counter(gone) == Counter(come):
                permuted.append(gone)
            else:
                edits.append((gone, come))
    out.kinds = sorted(kinds)
    deleted = Counter(t for run in deletes for t in run)
    inserted = Counter(t for run in inserts for t in run)
    if not edits and deleted == inserted:
        out.moved_only = bool(deletes or permuted)
        out.moved = list(dict.fromkeys(_fragment(r) for r in deletes + permuted))[:MAX_FRAGMENTS]
    else:
        # a run deleted in one place and inserted as it was in another moved: shown apart
        moves = Counter(" ".join(r) for r in deletes) & Counter(" ".join(r) for r in inserts)
        out.moved = [_fragment(m.split()) for m in moves][:MAX_FRAGMENTS]
        gone_runs = [g for g, _ in edits] + _without(deletes, moves)
        come_runs = [c for _, c in edits] + _without(inserts, moves)
        out.removed = [_fragment(r) for r in gone_runs if r][:MAX_FRAGMENTS]
        out.added = [_fragment(r) for r in come_runs if r][:MAX_FRAGMENTS]
        out.changed_tokens = sum(map(len, gone_runs)) + sum(map(len, come_runs))
    items_a, items_b = Counter(old.items), Counter(new.items)
    out.items_added = list((items_b - items_a).elements())[:MAX_FRAGMENTS]
    out.items_removed = list((items_a - items_b).elements())[:MAX_FRAGMENTS]
    return out


def _without(runs: list[list[str]], moves: Counter[str]) -> list[list[str]]:
    """``runs`` less one occurrence of each move (as many as ``moves`` counts)."""
    left = moves.copy()
    out = []
    for run in runs:
        key = " ".join(run)
        if left[key] > 0:
            left[key] -= 1
        else:
            out.append(run)
    return out
