"""The learned page kind: a multinomial logistic regression shipped as JSON, scored here.

The model is data (``kind_model.json``, trained by ``harness/focuseval/kind_learning.py`` on
wcxb-dev): ``{"version", "classes": [kind, …], "bias": [per class], "vocab": [feature, …],
"weights": [[per class] per vocab feature], "min_probability"}``: a kind told with less
probability than ``min_probability`` (optional, 0) leaves the rules' kind. The features are :mod:`kind_features`'; a
feature the model does not know weighs nothing, a missing one counts 0. The scorer is plain
Python (no sklearn, no pickles): one pass over the page's features, a softmax over the
classes. A model that does not load is refused with a clear error. No Scrapy.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from focuscrawl.blocks import rules

KIND_MODEL_VERSION = 1
DEFAULT_KIND_MODEL = Path(__file__).with_name("kind_model.json")
MAX_CLASSES = 32
MAX_VOCAB = 200_000


@dataclass(frozen=True, slots=True)
class KindModel:
    classes: tuple[str, ...]
    bias: tuple[float, ...]
    weights: dict[str, tuple[float, ...]]  # feature -> one weight per class
    min_probability: float = 0.0  # below it, the rules' kind stays (tell_kind)
    reads_names: bool = True  # has features of the class/id names' own words ("n:")


def _floats(values: object, n: int, what: str) -> tuple[float, ...]:
    if not isinstance(values, list) or len(values) != n:
        raise ValueError(f"{what}: expected a list of {n} numbers")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{what}: not numbers")
    out = tuple(float(v) for v in values)
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{what}: not finite")
    return out


def load_kind_model(path: str | Path = DEFAULT_KIND_MODEL) -> KindModel:
    """The model at ``path``; ``ValueError`` saying why when it is not one."""
    return _load(str(path))


@lru_cache(maxsize=4)
def _load(path: str) -> KindModel:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != KIND_MODEL_VERSION:
            version = data.get("version") if isinstance(data, dict) else None
            raise ValueError(f"version {version!r}, expected {KIND_MODEL_VERSION}")
        classes = data["classes"]
        if (
            not isinstance(classes, list)
            or not 1 <= len(classes) <= MAX_CLASSES
            or any(c not in rules.PAGE_KINDS for c in classes)
        ):
            raise ValueError(f"classes must be page kinds ({', '.join(rules.PAGE_KINDS)})")
        n = len(classes)
        vocab, rows = data["vocab"], data["weights"]
        if not isinstance(vocab, list) or not isinstance(rows, list) or len(vocab) != len(rows):
            raise ValueError("vocab and weights must be lists of the same length")
        if len(vocab) > MAX_VOCAB:
            raise ValueError(f"more than {MAX_VOCAB} features")
        weights = {
            str(name): _floats(row, n, f"weights of {name!r}")
            for name, row in zip(vocab, rows, strict=True)
        }
        gate = _floats([data.get("min_probability", 0.0)], 1, "min_probability")[0]
        names = any(k.startswith("n:") for k in weights)
        return KindModel(tuple(classes), _floats(data["bias"], n, "bias"), weights, gate, names)
    except (OSError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"kind model {path}: {exc}") from None


def probabilities(model: KindModel, features: dict[str, float]) -> list[float]:
    """The model's probability of each of its classes (in ``model.classes`` order)."""
    z = list(model.bias)
    n = len(z)
    get = model.weights.get
    for name, value in features.items():
        row = get(name)
        if row is None or not value:
            continue
        for c in range(n):
            z[c] += value * row[c]
    top = max(z)
    exps = [math.exp(max(-60.0, v - top)) for v in z]
    total = sum(exps)
    return [e / total for e in exps]


def predict_kind(model: KindModel, features: dict[str, float]) -> tuple[str, float]:
    """The most probable kind and its probability (the page's ``kind_confidence``)."""
    probs = probabilities(model, features)
    best = max(range(len(probs)), key=probs.__getitem__)
    return model.classes[best], round(probs[best], 3)


def tell_kind(
    model: KindModel, features: dict[str, float], rules_kind: tuple[str, float]
) -> tuple[str, float]:
    """The model's kind and probability, or ``rules_kind`` when the model is less sure than
    its ``min_probability``."""
    kind, probability = predict_kind(model, features)
    return (kind, probability) if probability >= model.min_probability else rules_kind
