"""The learned block classifier: a JSON model, a pure-Python scorer, the rules as fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from focuscrawl.blocks import partition
from focuscrawl.blocks.learned import (
    DEFAULT_MODEL,
    MODEL_VERSION,
    BlockModel,
    block_features,
    load_model,
    score_blocks,
)
from focuscrawl.blocks.partition import partition_features
from focuscrawl.middlewares.partition import PAGE_META, PartitionMiddleware

URL = "https://news.example/2026/herons"
HTML = (
    "<html><head><title>Herons</title></head><body>"
    "<nav><a href='/'>Home</a> <a href='/birds'>Birds</a> <a href='/about'>About</a></nav>"
    "<article><h1>Grey herons return to the lake</h1>"
    + "<p>The grey herons came back to the lake this spring, and the colony has grown to "
    "forty nests, the wardens say, after three quiet years.</p>"
    * 3
    + "</article><footer><a href='/imprint'>Imprint</a> <a href='/privacy'>Privacy</a>"
    "</footer></body></html>"
)


def _write(path: Path, weights: dict[str, float], bias: float, keep: float, take: float) -> Path:
    data = {"version": MODEL_VERSION, "features": weights, "bias": bias, "keep": keep,
            "take": take}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_shipped_model_loads_and_keeps_an_article() -> None:
    model = load_model(DEFAULT_MODEL)
    assert model.weights and 0.0 <= model.keep <= 1.0
    rules = partition(HTML, URL)
    learned = partition(HTML, URL, block_model=model)
    assert "forty nests" in learned.main_text
    assert "Imprint" not in learned.main_text and "Birds" not in learned.main_text
    assert rules.main_text.split() == learned.main_text.split()


def test_features_come_from_the_walk_and_the_page() -> None:
    page, features = partition_features(HTML, URL)
    assert len(features) == len(page.blocks)
    nav = next(f for b, f in zip(page.blocks, features, strict=True) if b.tag == "nav")
    para = next(f for b, f in zip(page.blocks, features, strict=True) if b.tag == "p")
    assert nav["link_density"] == 1.0 and nav["in_chrome_tag"] == 1.0
    assert para["link_density"] == 0.0 and para["kind=text"] == 1.0 and "p1=article" in para
    assert block_features(page) and "tag=p" in block_features(page)[2]


def test_the_model_re_reads_blocks_and_falls_back_to_the_rules(tmp_path: Path) -> None:
    # a model that reads every link-led block as content and nothing else
    model = load_model(_write(tmp_path / "m.json", {"link_density": 40.0}, -20.0, 0.5, 0.5))
    page = partition(HTML, URL, block_model=model)
    assert "Imprint" in page.main_text and "forty nests" not in page.main_text
    # a model that reads nothing: the rules' reading stays (no page loses its main text)
    nothing = load_model(_write(tmp_path / "n.json", {}, -30.0, 0.5, 0.5))
    assert partition(HTML, URL, block_model=nothing).main_text == partition(HTML, URL).main_text
    scores = score_blocks(partition(HTML, URL), model)
    assert all(0.0 <= s <= 1.0 for s in scores)


@pytest.mark.parametrize(
    "text",
    ["not json", json.dumps({"version": 99}), json.dumps({"version": MODEL_VERSION})],
)
def test_a_bad_model_is_refused_with_the_reason(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="block model"):
        load_model(path)
    with pytest.raises(ValueError, match="block model"):
        load_model(tmp_path / "missing.json")


def test_the_setting_turns_the_model_on_in_the_middleware(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.json", {"link_density": 40.0}, -20.0, 0.5, 0.5)
    pages = []
    for value in ("", str(path)):
        crawler = get_crawler(settings_dict={"FOCUSCRAWL_BLOCK_MODEL": value})
        mw = build_from_crawler(PartitionMiddleware, crawler)
        assert isinstance(mw.block_model, BlockModel) == bool(value)
        request = Request(URL)
        response = HtmlResponse(URL, body=HTML.encode(), encoding="utf-8", request=request)
        mw.process_response(request, response)
        pages.append(request.meta[PAGE_META])
    assert "Imprint" not in pages[0].main_text and "Imprint" in pages[1].main_text
    with pytest.raises(ValueError, match="block model"):
        build_from_crawler(
            PartitionMiddleware,
            get_crawler(settings_dict={"FOCUSCRAWL_BLOCK_MODEL": str(tmp_path / "none.json")}),
        )
