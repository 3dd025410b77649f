from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.topic import TopicError, load_topic


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "topic.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_phrase_needs_seeds() -> None:
    with pytest.raises(TopicError, match="no seeds"):
        load_topic("birds of prey")
    topic = load_topic("birds of prey", "http://a.test/,http://b.test/x")
    assert topic.keywords == ["birds of prey"]
    assert topic.seeds == ["http://a.test/", "http://b.test/x"]


def test_topic_file_fields_and_relative_examples(tmp_path: Path) -> None:
    (tmp_path / "ex.html").write_text("<p>eagle</p>")
    spec = write(
        tmp_path,
        'name = "raptors"\nkeywords = ["eagle", "falcon"]\nseeds = ["http://a.test/"]\n'
        'examples = ["ex.html", "http://b.test/good"]\nnegatives = []\n',
    )
    topic = load_topic(spec)
    assert (topic.name, topic.keywords, topic.seeds) == (
        "raptors",
        ["eagle", "falcon"],
        ["http://a.test/"],
    )
    assert topic.example_urls() == ["http://b.test/good"]
    assert topic.example_files() == [tmp_path / "ex.html"]


def test_seeds_argument_overrides_or_adds(tmp_path: Path) -> None:
    spec = write(tmp_path, 'name = "t"\nkeywords = ["k"]\nseeds = ["http://a.test/"]\n')
    assert load_topic(spec, "http://b.test/").seeds == ["http://b.test/"]
    assert load_topic(spec, "+http://b.test/").seeds == ["http://a.test/", "http://b.test/"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = [unclosed", "malformed topic file"),
        ('name = "t"\nkeywords = "not a list"\nseeds = ["http://a.test/"]', "'keywords' must be"),
        ('name = "t"\nseeds = ["ftp://a.test/"]', "not an http"),
        ('name = "t"\nkeywords = ["k"]', "no seeds"),
    ],
)
def test_bad_topic_files_give_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(TopicError, match=message) as info:
        load_topic(write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_missing_topic_file() -> None:
    with pytest.raises(TopicError, match="not found"):
        load_topic("/nonexistent/topic.toml")
