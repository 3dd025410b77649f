"""Per-key counts of two classes (0: irrelevant, 1: relevant), as the link learner and the
body-word model keep them: each key's ``[irrelevant, relevant]`` pair, and the examples of each
class. One example counted, or moved to the other class (a user's label, a retrained judge)."""

from __future__ import annotations

from collections.abc import Iterable


def count_into(counts: dict[str, list[int]], keys: Iterable[str], c: int) -> None:
    """One example's ``keys`` counted in class ``c``."""
    for key in keys:
        pair = counts.get(key)
        if pair is None:
            pair = counts[key] = [0, 0]
        pair[c] += 1


def move_into(counts: dict[str, list[int]], docs: list[int], keys: Iterable[str], c: int) -> bool:
    """One example counted in the other class moved to class ``c``: its keys' counts (none
    below 0) and the examples of each class; False when the other class has no example."""
    other = 1 - c
    if docs[other] <= 0:
        return False
    docs[other] -= 1
    docs[c] += 1
    for key in keys:
        pair = counts.get(key)
        if pair is None:
            pair = counts[key] = [0, 0]
        if pair[other] > 0:
            pair[other] -= 1
        pair[c] += 1
    return True
