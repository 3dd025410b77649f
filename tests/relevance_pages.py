"""A small synthetic topical web for the relevance tests: (url, html) pages of a few topics."""

from __future__ import annotations

import random

TOPICS: dict[str, list[str]] = {
    "birds": [
        "bird",
        "feather",
        "wing",
        "beak",
        "nest",
        "egg",
        "plumage",
        "migration",
        "songbird",
        "raptor",
        "heron",
        "owl",
    ],
    "football": [
        "football",
        "goal",
        "striker",
        "league",
        "referee",
        "match",
        "stadium",
        "penalty",
        "midfield",
        "coach",
    ],
    "cooking": [
        "recipe",
        "oven",
        "flour",
        "sauce",
        "simmer",
        "garlic",
        "butter",
        "roast",
        "dough",
        "seasoning",
    ],
    "finance": [
        "bank",
        "loan",
        "interest",
        "market",
        "stock",
        "bond",
        "investor",
        "credit",
        "inflation",
        "dividend",
    ],
    "space": [
        "planet",
        "orbit",
        "telescope",
        "galaxy",
        "comet",
        "rocket",
        "astronaut",
        "nebula",
        "asteroid",
        "lunar",
    ],
}
COMMON = [
    "people",
    "world",
    "year",
    "great",
    "known",
    "large",
    "small",
    "often",
    "part",
    "called",
    "found",
    "include",
    "use",
    "time",
    "place",
    "early",
    "later",
    "area",
    "water",
    "city",
    "history",
    "form",
    "region",
]


def page(topic: str, i: int, rng: random.Random, words: int = 120) -> tuple[str, str]:
    vocab = TOPICS[topic]
    body = []
    for _ in range(4):
        para = [
            rng.choice(vocab) if rng.random() < 0.3 else rng.choice(COMMON)
            for _ in range(words // 4)
        ]
        body.append("<p>" + " ".join(para) + "</p>")
    title = f"{rng.choice(vocab).title()} {rng.choice(COMMON)} {i}"
    nav = '<nav><a href="/">Home</a> <a href="/about">About</a></nav>'
    html = (
        f"<html><head><title>{title}</title></head><body>{nav}<h1>{title}</h1>"
        f"{''.join(body)}<footer>Copyright example site</footer></body></html>"
    )
    return f"http://example.test/{topic}/{i}", html


def web(n_per_topic: int = 30, seed: int = 0) -> dict[str, list[tuple[str, str]]]:
    rng = random.Random(seed)
    return {t: [page(t, i, rng) for i in range(n_per_topic)] for t in TOPICS}
