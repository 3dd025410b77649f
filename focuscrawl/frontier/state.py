"""The crawl state a request carries, as one typed record, and its compact wire form.

``request.meta[STATE_META]`` holds a :class:`RequestState`: the link strategy writes it for each
child link (:mod:`focuscrawl.strategy`), the spider reads it back when the page arrives, the
scheduler orders by its score. Only the wire codec (:meth:`RequestState.to_wire` /
:meth:`RequestState.from_wire`) knows the short keys: a frontier entry (memory, JOBDIR journal,
Redis) stores the compact dict, and :mod:`.trust` validates that compact form when it is read
back. Changing a wire key or the order they are written in changes the bytes of every stored
entry (the Redis entry codec's preset dictionary, :mod:`.redis_entry`, is tuned to them).

No import of the strategy or of Scrapy: the frontier, the strategy and the spiders all read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from focuscrawl.meta import STATE_META

__all__ = ["WIRE_KEYS", "RequestState", "state_of"]

#: field -> its key on the wire, in the order the keys are written
WIRE_KEYS: dict[str, str] = {
    "depth": "d",
    "inherited": "inh",
    "tunnel_budget": "tb",
    "seed": "seed",
    "example": "ex",
    "revisit": "re",
    "anchor": "a",
    "context": "c",
    "parent": "par",
    "score": "score",
}
#: the wire keys whose values must be numbers (the trust check's rule)
NUMERIC_WIRE_KEYS = ("score", "d", "inh", "tb")


@dataclass(slots=True)
class RequestState:
    """What the crawl knows of a queued or fetched URL besides the URL itself.

    ``None`` (or ``False`` / ``""``) marks a field the request does not carry: it is left out of
    the wire form, so a breadth-first child costs only its depth, parent and score."""

    depth: int = 0  # links from the seeds (or example pages)
    inherited: float | None = None  # Shark-Search: the score inherited from the ancestors
    tunnel_budget: int | None = None  # Shark-Search black tunneling: hops left
    seed: bool = False  # a seed page: teaches the topic model, sets the seed scale
    example: bool = False  # a topic example page: teaches the topic model
    revisit: bool = False  # a recrawl of a stored page: only its new links are followed
    anchor: str = ""  # the link learner's anchor words of the link that led here
    context: str = ""  # ... and its link context (when a learner feature)
    parent: str | None = None  # URL of the page whose link led here
    score: float | None = None  # the frontier score the request was queued with

    def copy(self) -> RequestState:
        """A shallow copy (``copy.copy`` of a slotted dataclass is ~10 × slower)."""
        return RequestState(
            self.depth,
            self.inherited,
            self.tunnel_budget,
            self.seed,
            self.example,
            self.revisit,
            self.anchor,
            self.context,
            self.parent,
            self.score,
        )

    def to_wire(self) -> dict[str, Any]:
        """The compact JSON-able dict stored in a frontier entry (keys in :data:`WIRE_KEYS`
        order; fields the request does not carry are left out)."""
        wire: dict[str, Any] = {"d": self.depth}
        if self.inherited is not None:
            wire["inh"] = self.inherited
        if self.tunnel_budget is not None:
            wire["tb"] = self.tunnel_budget
        if self.seed:
            wire["seed"] = 1
        if self.example:
            wire["ex"] = 1
        if self.revisit:
            wire["re"] = 1
        if self.anchor:
            wire["a"] = self.anchor
        if self.context:
            wire["c"] = self.context
        if self.parent is not None:
            wire["par"] = self.parent
        if self.score is not None:
            wire["score"] = self.score
        return wire

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> RequestState:
        """The record of a wire dict (as :mod:`.trust` admits it: numbers where numbers belong,
        JSON scalars elsewhere). Keys it does not know are dropped."""
        inherited = wire.get("inh")
        budget = wire.get("tb")
        anchor = wire.get("a")
        context = wire.get("c")
        parent = wire.get("par")
        score = wire.get("score")
        return cls(
            depth=int(wire.get("d", 0)),
            inherited=None if inherited is None else float(inherited),
            tunnel_budget=None if budget is None else int(budget),
            seed=bool(wire.get("seed")),
            example=bool(wire.get("ex")),
            revisit=bool(wire.get("re")),
            anchor=anchor if isinstance(anchor, str) else "",
            context=context if isinstance(context, str) else "",
            parent=parent if isinstance(parent, str) else None,
            score=None if score is None else float(score),
        )


def state_of(meta: Mapping[str, Any]) -> RequestState | None:
    """The request's state from its meta; None when it carries none. A wire dict (a request
    another component built by hand) is read through :meth:`RequestState.from_wire`."""
    value = meta.get(STATE_META)
    if value is None or isinstance(value, RequestState):
        return value
    if isinstance(value, Mapping):
        return RequestState.from_wire(value)
    return None
