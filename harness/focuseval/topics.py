"""Evaluation topics: keywords, seeds and labels chosen by stated rules, written as topic TOML.

Wikispeedia (a category such as ``subject.Science.Biology.Birds``), on any site that serves its
articles (the Wikispeedia site, the dressed web: the labels are that site's URLs):

- *members*: the articles in the category or one of its sub-categories (``categories.tsv``).
- *keywords*: the words of the category's last path component, lower-cased, split on ``_``,
  stop words dropped, plus the singular of each plural word (``Birds`` → ``birds``, ``bird``).
- *seeds*: the :data:`SEEDS` members with the most in-links from other members (ties by name),
  EXCLUDING list pages (``List_of…``) and hubs whose out-links reach more than
  :data:`HUB_SHARE` of the members — a seed that links to most of the topic would make recall
  trivial.
- *targets* (for target recall): the members reachable from the seeds in ``links.tsv``.

Synthetic: the generator's topic, its own keywords, seeds (the first non-hub pages of the
topic's front cluster) and labels; targets are the topic's pages reachable from the seeds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from focuseval.metrics import Labels

SEEDS = 3
HUB_SHARE = 0.2
STOP_WORDS = {"and", "of", "the", "in", "for", "a"}

WIKISPEEDIA_RULE = (
    f"seeds: the {SEEDS} category members with the most in-links from other members, excluding "
    f"List_of pages and hubs linking to more than {HUB_SHARE:.0%} of the members; keywords: the "
    "words of the category's last path component plus singulars; targets: members reachable "
    "from the seeds"
)
SYNTHETIC_RULE = (
    "seeds: the first 3 non-hub pages of the topic's front cluster (generator order); keywords: "
    "the generator's 3 keywords; targets: the topic's pages reachable from the seeds"
)

#: The Wikispeedia topics the crawl's parameters were tuned on (issues up to 26).
TUNED_TOPICS = {
    "Birds": "subject.Science.Biology.Birds",
    "Space": "subject.Science.Physics.Space_Astronomy",
    "Health": "subject.Science.Biology.Health_and_medicine",
    "Chemistry": "subject.Science.Chemistry",
    "British": "subject.History.British_History",
    "African": "subject.Geography.African_Geography",
}
#: The topics for developing the learned link judge.
DEV_TOPICS = {
    "Mammals": "subject.Science.Biology.Mammals",
    "European": "subject.Geography.European_Geography",
    "Politics": "subject.Citizenship.Politics_and_government",
}
#: Never tuned on: the test of a change, after it was made on the others.
HELDOUT_TOPICS = {
    "Figures": "subject.People.Historical_figures",
    "Plants": "subject.Science.Biology.Plants",
    "Asia": "subject.Geography.Geography_of_Asia",
    "Food": "subject.Everyday_life.Food_and_agriculture",
    "Railway": "subject.Design_and_Technology.Railway_transport",
    "Ancient": "subject.History.Ancient_History_Classical_History_and_Mythology",
}
#: A second held-out set, drawn by :data:`FRESH_RULE` when the first six had been used to choose
#: the learned judge's gate (issue 27): a change is chosen on the others and tested here.
FRESH_TOPICS = {
    "Countries": "subject.Countries",
    "Britain": "subject.Geography.Geography_of_Great_Britain",
    "NorthAmerica": "subject.Geography.North_American_Geography",
    "LatinAmerica": "subject.Geography.Central_and_South_American_Geography",
    "History": "subject.History.General_history",
    "Geology": "subject.Geography.Geology_and_geophysics",
    "Engineering": "subject.Design_and_Technology.Engineering",
    "Insects": "subject.Science.Biology.Insects_Reptiles_and_Fish",
    "Military": "subject.History.Military_History_and_War",
    "Writers": "subject.People.Writers_and_critics",
}
FRESH_COUNT = 10
FRESH_RULE = (
    f"the {FRESH_COUNT} categories with the most members (sub-categories included; ties by name) "
    "that are neither an ancestor nor a descendant of a tuned, dev or held-out topic nor of one "
    "another"
)
TOPIC_SETS = {
    "tuned": TUNED_TOPICS,
    "dev": DEV_TOPICS,
    "heldout": HELDOUT_TOPICS,
    "fresh": FRESH_TOPICS,
}
#: Every named Wikispeedia topic: short name → category.
WIKISPEEDIA_TOPICS = {**TUNED_TOPICS, **DEV_TOPICS, **HELDOUT_TOPICS, **FRESH_TOPICS}


def _nested(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def fresh_categories(corpus, count: int = FRESH_COUNT) -> list[str]:  # type: ignore[no-untyped-def]
    """The categories :data:`FRESH_RULE` draws, largest first (what :data:`FRESH_TOPICS` holds)."""
    named = [*TUNED_TOPICS.values(), *DEV_TOPICS.values(), *HELDOUT_TOPICS.values()]
    sized = sorted(
        ((len(corpus.members(c)), c) for c in corpus.all_categories() if "." in c),
        key=lambda row: (-row[0], row[1]),
    )
    chosen: list[str] = []
    for _, category in sized:
        if not any(_nested(category, other) for other in [*named, *chosen]):
            chosen.append(category)
        if len(chosen) == count:
            break
    return chosen


def topic_names(spec: str) -> list[str]:
    """Short topic names from a comma-separated list of short names and set names
    (``tuned``, ``dev``, ``heldout``), in order, without repeats."""
    names: list[str] = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item.lower() in TOPIC_SETS:
            names += TOPIC_SETS[item.lower()]
        elif item in WIKISPEEDIA_TOPICS:
            names.append(item)
        else:
            known = ", ".join([*TOPIC_SETS, *WIKISPEEDIA_TOPICS])
            raise ValueError(f"unknown topic {item!r}; one of {known}")
    return list(dict.fromkeys(names))


@dataclass(slots=True)
class EvalTopic:
    name: str
    keywords: list[str]
    seeds: list[str]
    labels: Labels
    rule: str

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.name)


def category_keywords(category: str) -> list[str]:
    words = [
        w.lower() for w in category.rsplit(".", 1)[-1].split("_") if w.lower() not in STOP_WORDS
    ]
    out: list[str] = []
    for w in words:
        out.append(w)
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            out.append(w[:-1])
    return list(dict.fromkeys(out))


def wikispeedia_seeds(corpus, category: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Seed article names by the rule stated in the module docstring."""
    members = corpus.members(category)
    if not members:
        raise ValueError(f"no Wikispeedia article in category {category!r}")

    def is_hub(name: str) -> bool:
        reached = len(set(corpus.links.get(name, ())) & members)
        return reached > HUB_SHARE * len(members)

    def in_degree(name: str) -> int:
        return sum(1 for src in corpus.in_links.get(name, ()) if src in members)

    candidates = [n for n in members if not n.startswith("List_of") and not is_hub(n)]
    candidates.sort(key=lambda n: (-in_degree(n), n))
    return candidates[:SEEDS]


def wikispeedia_topic(corpus, url_for, category: str) -> EvalTopic:  # type: ignore[no-untyped-def]
    """``url_for(name)`` maps article names to the served URLs; ``url_for`` may also be a site
    that has one (:class:`~focuseval.wikispeedia.WikispeediaSite`,
    :class:`~focuseval.dressed.DressedSite`): same articles, labels on that site's URLs."""
    url_for = getattr(url_for, "url_for", url_for)
    seeds = wikispeedia_seeds(corpus, category)
    members = corpus.members(category)
    targets = corpus.reachable(seeds) & members
    labels = Labels.from_urls([url_for(n) for n in members], [url_for(n) for n in targets])
    return EvalTopic(
        category, category_keywords(category), [url_for(n) for n in seeds], labels, WIKISPEEDIA_RULE
    )


def synthetic_topic(web, name: str) -> EvalTopic:  # type: ignore[no-untyped-def]
    from focuseval.synthetic_vocab import TOPICS

    if name not in TOPICS:
        raise ValueError(f"unknown synthetic topic {name!r}; expected one of {', '.join(TOPICS)}")
    relevant = {web.url(p) for p in web.pages if p.topic == name}
    labels = Labels.from_urls(relevant, web.relevant_urls(name))
    return EvalTopic(
        name, list(TOPICS[name]["keywords"]), list(web.seeds[name]), labels, SYNTHETIC_RULE
    )


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_topic_toml(topic: EvalTopic, path: Path) -> Path:
    """The topic file ``scrapy crawl topical -a topic=<file>`` reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"# {topic.rule}\n"
        f"name = {_toml_str(topic.name)}\n"
        f"keywords = {_toml_list(topic.keywords)}\n"
        f"seeds = {_toml_list(topic.seeds)}\n",
        encoding="utf-8",
    )
    return path
