from __future__ import annotations

import json

from focuscrawl.cli import main
from focuscrawl.relevance import RelevanceModel
from tests.relevance_pages import web


def _write(folder, pages):
    folder.mkdir()
    for i, (_, html) in enumerate(pages):
        (folder / f"p{i}.html").write_text(html, encoding="utf-8")
    return folder


def test_train_from_a_topic_file_and_unlabelled_export(tmp_path, capsys):
    pages = web(n_per_topic=20, seed=3)
    examples = _write(tmp_path / "examples", pages["birds"][:8])
    topic = tmp_path / "birds.toml"
    topic.write_text(
        'name = "birds"\nkeywords = ["birds"]\nseeds = ["http://example.test/"]\n'
        f'examples = ["{examples}/p0.html", "{examples}/p1.html", "http://127.0.0.1:9/gone"]\n'
    )
    export = tmp_path / "crawl.jl"
    with export.open("w") as fh:
        for topic_name, ps in pages.items():
            for url, html in ps[10:]:
                text = html.split("<h1>", 1)[1]
                fh.write(json.dumps({"url": url, "title": topic_name, "text": text}) + "\n")
        fh.write("not json\n")
    out = tmp_path / "model.json"
    rc = main(
        [
            "train",
            str(topic),
            "--positives",
            str(examples),
            "-o",
            str(out),
            "--unlabeled",
            str(export),
        ]
    )
    assert rc == 0
    assert "pu-ensemble model" in capsys.readouterr().out
    model = RelevanceModel.load(out)
    bird_url, bird_html = pages["birds"][9]
    fin_url, fin_html = pages["finance"][0]
    assert model.is_relevant(bird_html, bird_url)
    assert not model.is_relevant(fin_html, fin_url)


def test_train_with_nothing_is_a_user_error(tmp_path, capsys):
    empty = tmp_path / "none"
    empty.mkdir()
    rc = main(["train", "--positives", str(empty), "-o", str(tmp_path / "m.json")])
    assert rc == 2
    assert "nothing to learn from" in capsys.readouterr().err


def test_train_with_a_missing_folder_is_a_user_error(tmp_path, capsys):
    rc = main(
        ["train", "birds", "--negatives", str(tmp_path / "absent"), "-o", str(tmp_path / "m")]
    )
    assert rc == 2
    assert "no such file or folder" in capsys.readouterr().err
