"""``focuscrawl train``: a relevance model from a topic file and example pages."""

from __future__ import annotations

import argparse
import json
import logging
import urllib.request
from collections.abc import Iterator
from html import escape
from pathlib import Path

from focuscrawl.cli import CommandError

NAME = "train"
EXAMPLE = "focuscrawl train birds.toml --unlabeled harvest.jsonl -o birds-model.json"
HELP = "train a relevance model (SVM, or PU learning without negatives) and save it as JSON"

log = logging.getLogger(__name__)
FETCH_TIMEOUT = 20.0
HTML_SUFFIXES = (".html", ".htm", ".xhtml")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "topic",
        nargs="?",
        default=None,
        help="topic TOML file (keywords, examples = positive URLs or HTML files, "
        "negatives) or a keyword phrase",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        help="model file to write (JSON; .gz compresses)",
    )
    parser.add_argument(
        "--positives",
        nargs="*",
        type=Path,
        default=[],
        help="more positive pages: HTML files or folders of them",
    )
    parser.add_argument(
        "--negatives",
        nargs="*",
        type=Path,
        default=[],
        help="negative pages: HTML files or folders (then an SVM is trained)",
    )
    parser.add_argument(
        "--unlabeled",
        nargs="*",
        type=Path,
        default=[],
        help="unlabelled pages: HTML files, folders, or a crawl's JSON-lines "
        "export (url, title, text); enables PU learning",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (hold-out, PSO)")


def _html_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix.lower() in HTML_SUFFIXES)
    return [path]


def read_pages(paths: list[Path]) -> Iterator[tuple[str, bytes]]:
    """(url, html) from HTML files, folders and JSON-lines exports; unreadable ones are skipped."""
    for path in paths:
        if not path.exists():
            raise CommandError(f"no such file or folder: {path}")
        if path.suffix in (".jl", ".jsonl"):
            yield from _read_export(path)
            continue
        for f in _html_files(path):
            try:
                yield f.resolve().as_uri(), f.read_bytes()
            except OSError as exc:
                log.warning("skipping %s: %s", f, exc.strerror or exc)


def _read_export(path: Path) -> Iterator[tuple[str, bytes]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                item = json.loads(line)
                url, title, text = item["url"], item.get("title", ""), item.get("text", "")
            except (json.JSONDecodeError, KeyError, TypeError):
                log.warning("%s:%d: not an exported page item, skipped", path, n)
                continue
            html = f"<html><head><title>{escape(title)}</title></head><body><p>{escape(text)}</p>"
            yield url, html.encode()


def fetch(url: str) -> bytes | None:
    """An example page by URL; None (logged) when it cannot be fetched."""
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "focuscrawl-train"})
        with urllib.request.urlopen(req, timeout=FETCH_TIMEOUT) as resp:  # noqa: S310
            return resp.read()
    except (OSError, ValueError) as exc:
        log.warning("cannot fetch example %s: %s", url, exc)
        return None


def _topic_pages(entries: list[str], files: list[Path]) -> Iterator[tuple[str, bytes]]:
    yield from read_pages(files)
    for url in entries:
        body = fetch(url)
        if body is not None:
            yield url, body


def _read_topic(spec: str | None):  # noqa: ANN202
    """A topic file (seeds not needed to train) or a keyword phrase."""
    from focuscrawl.topic import Topic, TopicError, _load_file

    if not spec or not spec.strip():
        return Topic(name="", keywords=[], seeds=[])
    if spec.endswith(".toml") or Path(spec).is_file():
        try:
            return _load_file(Path(spec))
        except TopicError as exc:
            raise CommandError(str(exc)) from exc
    return Topic(name=spec, keywords=[spec], seeds=[])


def run(args: argparse.Namespace) -> int:
    from focuscrawl.relevance import train

    topic = _read_topic(args.topic)
    urls = topic.example_urls()
    positives = list(_topic_pages(urls, topic.example_files())) + list(read_pages(args.positives))
    neg_urls = [n for n in topic.negatives if "://" in n]
    neg_files = [Path(n) for n in topic.negatives if "://" not in n]
    negatives = list(_topic_pages(neg_urls, neg_files)) + list(read_pages(args.negatives))
    unlabeled = list(read_pages(args.unlabeled))
    try:
        model = train(
            positives,
            unlabeled=unlabeled,
            negatives=negatives,
            keywords=topic.keywords,
            seed=args.seed,
        )
    except ValueError as exc:
        raise CommandError(f"{exc} (give a topic with keywords or --positives)") from exc
    try:
        model.save(args.output)
    except OSError as exc:
        raise CommandError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    print(
        f"{model.kind} model: {len(positives)} positive, {len(negatives)} negative, "
        f"{len(unlabeled)} unlabelled pages ({model.info.get('skipped_pages', 0)} skipped) "
        f"→ {args.output}"
    )
    return 0
