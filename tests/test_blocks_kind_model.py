"""The learned page kind: features before extraction, a JSON model, a pure-Python scorer."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from focuseval import kind_learning
from scrapy.http import HtmlResponse, Request
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.blocks import partition, rules
from focuscrawl.blocks.kind_model import (
    DEFAULT_KIND_MODEL,
    KIND_MODEL_VERSION,
    KindModel,
    load_kind_model,
    predict_kind,
    probabilities,
)
from focuscrawl.blocks.partition import partition_kind_features
from focuscrawl.middlewares.partition import PAGE_META, PartitionMiddleware

NAV = "<nav><a href='/'>Home</a> <a href='/about'>About</a> <a href='/help'>Help</a></nav>"
PROSE = (
    "The grey herons came back to the lake this spring, and the colony has grown to forty "
    "nests, the wardens say, after three quiet years of floods along the northern shore. "
)


def _html(title: str, body: str, head: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{NAV}{body}</body></html>"


def _article(i: int) -> tuple[str, str]:
    body = "<article><h1>Herons</h1>" + f"<p>{PROSE} Report {i}.</p>" * 5 + "</article>"
    head = '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
    return _html(f"Herons return, part {i}", body, head), (
        f"https://news{i}.example/2024/05/herons-{i}"
    )


def _product(i: int) -> tuple[str, str]:
    body = (
        f"<div class='product-detail'><h1>Blue kettle {i}</h1><span class='price'>$2{i}.99</span>"
        "<form><button class='add-to-cart'>Add to cart</button></form>"
        "<table><tr><td>Volume</td><td>1.7 l</td></tr><tr><td>Power</td><td>2 kW</td></tr>"
        "</table></div>"
    )
    head = '<script type="application/ld+json">{"@type": "Product"}</script>'
    return _html(f"Buy Blue kettle {i}", body, head), f"https://shop{i}.example/products/kettle-{i}"


def _forum(i: int) -> tuple[str, str]:
    posts = "".join(
        f"<div class='topic-post'><span class='author'>user{j}</span><time>2024-01-0{j}</time>"
        f"<div class='cooked'><p>Reply {j}: has anyone seen the herons {i}?</p></div></div>"
        for j in range(1, 6)
    )
    return _html(f"Herons thread {i} - Forum", f"<div class='post-stream'>{posts}</div>"), (
        f"https://forum{i}.example/t/herons-{i}/12{i}"
    )


FIXTURES = {"article": _article, "product": _product, "forum": _forum}


def _pages() -> list[dict[str, Any]]:
    pages = []
    for kind, make in FIXTURES.items():
        for i in range(4):
            html, url = make(i)
            _, feats = partition_kind_features(html, url)
            pages.append({"kind": kind, "f": feats, "domain": url.split("/")[2], "url": url})
    return pages


SETTING = {"C": 1.0, "class_weight": None, "min_domains": 1,
           "groups": frozenset(kind_learning.GROUPS) | {"bias"}}  # fmt: skip


def test_the_exported_json_scores_as_the_trained_model(tmp_path: Path) -> None:
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    pages = _pages()
    path = tmp_path / "kind.json"
    kind_learning.export(kind_learning.fit(pages, SETTING), path, "test", SETTING)
    model = load_kind_model(path)
    assert set(model.classes) == set(FIXTURES)
    # the same fit, by sklearn directly: the JSON scorer gives its probabilities
    vec = DictVectorizer()
    x = vec.fit_transform([p["f"] for p in pages])
    clf = LogisticRegression(C=1.0, max_iter=3000).fit(x, [p["kind"] for p in pages])
    expected = clf.predict_proba(x)
    for p, row in zip(pages, expected, strict=True):
        got = dict(zip(model.classes, probabilities(model, p["f"]), strict=True))
        for c, prob in zip(clf.classes_, row, strict=True):
            assert got[str(c)] == pytest.approx(prob, abs=1e-3)
        assert predict_kind(model, p["f"])[0] == p["kind"]
    # a page the model did not see, told through partition()
    html, url = _product(9)
    page = partition(html, url, kind_model=model)
    assert page.kind == "product" and 0.34 < page.kind_confidence <= 1.0
    assert "Volume" in page.main_text  # read as a product: the spec table is content


def test_the_shipped_model_loads_and_tells_clear_pages() -> None:
    model = load_kind_model(DEFAULT_KIND_MODEL)
    assert set(model.classes) <= set(rules.PAGE_KINDS) and len(model.classes) >= 7
    assert model.weights
    for kind, make in FIXTURES.items():
        html, url = make(7)
        assert partition(html, url, kind_model=model).kind == kind, kind


def test_the_shipped_json_is_plain_data() -> None:
    text = DEFAULT_KIND_MODEL.read_text(encoding="utf-8")
    data = json.loads(text)

    def plain(value: object) -> bool:
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, str | int | float | bool)

    assert plain(data)
    assert set(data) >= {"version", "classes", "bias", "vocab", "weights"}
    assert all(isinstance(v, str) for v in data["vocab"])
    assert all(math.isfinite(w) for row in data["weights"] for w in row)
    assert len(data["weights"]) == len(data["vocab"])
    assert all(len(row) == len(data["classes"]) for row in data["weights"])


def test_hostile_input_is_told_without_error() -> None:
    model = load_kind_model(DEFAULT_KIND_MODEL)
    # empty and blank pages: no kind to tell, the partition says why
    for body in ("", "   ", b""):
        page = partition(body, "https://x.example/", kind_model=model)
        assert page.error == "empty" and page.kind == "other"
    # a huge URL and a huge class list: the features are capped
    url = (
        "https://x.example/" + "/".join(f"seg{i}-word-more" for i in range(20_000)) + "?a=1" * 5000
    )
    names = " ".join(f"c{i}-name" for i in range(20_000))
    html = f"<html><body><div class='{names}'><p>{PROSE}</p></div></body></html>"
    _, feats = partition_kind_features(html, url)
    assert len(feats) < 600
    page = partition(html, url, kind_model=model)  # the model or, unsure, the rules
    assert page.kind in rules.PAGE_KINDS and 0.0 <= page.kind_confidence <= 1.0
    kind, probability = predict_kind(model, feats)
    assert kind in model.classes and 0.0 < probability <= 1.0
    # missing features: the bias alone tells a kind; unknown features weigh nothing
    assert predict_kind(model, {})[0] in model.classes
    assert predict_kind(model, {"no such feature": 1e9}) == predict_kind(model, {})
    probs = probabilities(model, {name: 50.0 for name in list(model.weights)[:200]})
    assert all(math.isfinite(p) for p in probs) and sum(probs) == pytest.approx(1.0)


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "data",
    [
        "not a model",
        {"version": 99},
        {"version": KIND_MODEL_VERSION},
        {
            "version": KIND_MODEL_VERSION,
            "classes": ["article", "os.system"],
            "bias": [0, 0],
            "vocab": [],
            "weights": [],
        },
        {
            "version": KIND_MODEL_VERSION,
            "classes": ["article"],
            "bias": [0],
            "vocab": ["a"],
            "weights": [],
        },
        {
            "version": KIND_MODEL_VERSION,
            "classes": ["article"],
            "bias": [0],
            "vocab": ["a"],
            "weights": [["1"]],
        },
    ],  # fmt: skip
)
def test_a_bad_model_is_refused_with_the_reason(tmp_path: Path, data: object) -> None:
    path = _write(tmp_path / f"bad{hash(json.dumps(data)) % 10_000}.json", data)
    with pytest.raises(ValueError, match="kind model"):
        load_kind_model(path)


def test_a_non_finite_weight_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nan.json"
    path.write_text('{"version": 1, "classes": ["article"], "bias": [NaN], "vocab": [],'
                    ' "weights": []}', encoding="utf-8")  # fmt: skip
    with pytest.raises(ValueError, match="not finite"):
        load_kind_model(path)
    with pytest.raises(ValueError, match="kind model"):
        load_kind_model(tmp_path / "missing.json")


def test_the_setting_turns_the_model_on_in_the_middleware(tmp_path: Path) -> None:
    # a model that tells every page a product: the middleware's page says so
    path = _write(tmp_path / "m.json", {"version": KIND_MODEL_VERSION, "classes": ["product"],
                                        "bias": [0.0], "vocab": [], "weights": []})  # fmt: skip
    html, url = _article(1)
    kinds = []
    for value in ("", str(path)):
        crawler = get_crawler(settings_dict={"FOCUSCRAWL_KIND_MODEL": value})
        mw = build_from_crawler(PartitionMiddleware, crawler)
        assert isinstance(mw.kind_model, KindModel) == bool(value)
        request = Request(url)
        response = HtmlResponse(url, body=html.encode(), encoding="utf-8", request=request)
        mw.process_response(request, response)
        kinds.append(request.meta[PAGE_META].kind)
    assert kinds == ["article", "product"]
    with pytest.raises(ValueError, match="kind model"):
        build_from_crawler(
            PartitionMiddleware,
            get_crawler(settings_dict={"FOCUSCRAWL_KIND_MODEL": str(tmp_path / "none.json")}),
        )


def test_an_unsure_model_leaves_the_rules_kind(tmp_path: Path) -> None:
    # two classes weighed alike: probability 0.5, below the gate of 0.6, so the rules decide
    data = {"version": KIND_MODEL_VERSION, "classes": ["product", "service"], "bias": [0.0, 0.0],
            "vocab": [], "weights": [], "min_probability": 0.6}  # fmt: skip
    html, url = _article(3)
    rules_page = partition(html, url)
    gated = partition(html, url, kind_model=load_kind_model(_write(tmp_path / "g.json", data)))
    assert (gated.kind, gated.kind_confidence) == (rules_page.kind, rules_page.kind_confidence)
    assert gated.kind == "article"
    sure = partition(html, url, kind_model=load_kind_model(
        _write(tmp_path / "s.json", {**data, "min_probability": 0.5})))  # fmt: skip
    assert sure.kind in ("product", "service") and sure.kind_confidence == 0.5
