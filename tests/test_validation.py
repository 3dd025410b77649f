"""Every setting and spider argument is checked before the engine starts: one line per mistake,
exit status 2; a crawl that fetched nothing says why per seed and exits with status 3."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from focuscrawl.defaults import SETTINGS, STRATEGIES, Setting
from focuscrawl.strategy.scoring import LinkScorer, SharkParams
from focuscrawl.validation import argument_errors, describe, setting_errors, value_error


def wrong_values(s: Setting) -> list[object]:
    """Values each setting must refuse, from what its registry entry says it takes."""
    if s.choices:
        return ["zzz-not-a-choice"]
    if isinstance(s.default, bool):
        return ["maybe", "2"]
    if isinstance(s.default, int | float):
        out: list[object] = ["abc", "nan", "inf"]
        if s.minimum is not None:
            out.append(s.minimum - 1)
        if s.maximum is not None:
            out.append(s.maximum + 1)
        if isinstance(s.default, int):
            out.append("1.5")
        return out
    return []  # free text (paths, prefixes): any string is a value


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_every_setting_refuses_wrong_values_and_takes_its_default(setting: Setting) -> None:
    assert value_error(setting, setting.default) is None
    assert value_error(setting, str(setting.default)) is None  # as `-s NAME=VALUE` gives it
    for wrong in wrong_values(setting):
        error = value_error(setting, wrong)
        assert error == f"{setting.name} must be {describe(setting)}, got {wrong!r}"


def test_the_defaults_pass_and_the_strategies_are_the_scorers() -> None:
    assert setting_errors({s.name: s.default for s in SETTINGS}) == []
    for strategy in STRATEGIES:  # every name the settings accept is one the frontier scores
        assert LinkScorer(strategy, lambda text: 0.0, 0.5, SharkParams()).strategy == strategy
    with pytest.raises(ValueError, match="unknown strategy"):
        LinkScorer("zzz", lambda text: 0.0, 0.5, SharkParams())


def test_messages_and_special_settings() -> None:
    got = setting_errors(
        {
            "FOCUSCRAWL_LINK_WORDS": "abc",
            "FOCUSCRAWL_SHARK_BETA": "1.5",
            "FOCUSCRAWL_LINK_LEARNER_FEATURES": "auz",
            "FOCUSCRAWL_ALLOW_PRIVATE": "127.0.0.1,not a host/99",
        },
        only_set=True,
    )
    assert got[:2] == [
        "FOCUSCRAWL_SHARK_BETA must be a number between 0 and 1, got '1.5'",
        "FOCUSCRAWL_LINK_WORDS must be a number >= 0, got 'abc'",
    ]
    assert got[2].startswith("FOCUSCRAWL_LINK_LEARNER_FEATURES must be letters of 'auhc'")
    assert "not a host/99" in got[3]
    assert argument_errors({"strategy": "zzz", "mode": "later"}) == [
        f"strategy must be one of {', '.join(STRATEGIES)}, got 'zzz'",
        "mode must be one of crawl, recrawl, got 'later'",
    ]


def crawl(
    tmp_path: Path, *args: str, settings_module: str = "focuscrawl.settings"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": settings_module}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "scrapy", "crawl", "topical", *args]
    cmd += ["-s", f"FOCUSCRAWL_DATA_DIR={tmp_path / 'data'}", "-s", "LOG_LEVEL=INFO"]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if "error:" in line]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["-a", "strategy=zzz"],
            f"scrapy crawl topical: error: strategy must be one of {', '.join(STRATEGIES)}, got 'zzz'",
        ),
        (
            ["-s", "FOCUSCRAWL_LINK_WORDS=abc"],
            "scrapy crawl topical: error: FOCUSCRAWL_LINK_WORDS must be a number >= 0, got 'abc'",
        ),
        (
            ["-s", "FOCUSCRAWL_STRATEGY=best"],
            "scrapy crawl topical: error: FOCUSCRAWL_STRATEGY must be one of 'bfs', 'bestfirst', "
            "'sharksearch', 'sharksearch-blocks', 'sharksearch-blocks-tunnel', 'hits', 'learned', got 'best'",
        ),
    ],
)
def test_a_wrong_value_is_one_line_and_status_2(tmp_path: Path, args: list[str], line: str) -> None:
    proc = crawl(tmp_path, "-a", "topic=birds", "-a", "seeds=http://127.0.0.2:9/", *args)
    assert proc.returncode == 2
    assert error_lines(proc) == [line]
    assert "Traceback" not in proc.stderr and "Spider opened" not in proc.stderr


def test_the_addon_in_another_project_checks_too(tmp_path: Path) -> None:
    pkg = tmp_path / "otherproject"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "settings.py").write_text(
        'BOT_NAME = "other"\nSPIDER_MODULES = ["focuscrawl.spiders"]\n'
        'ADDONS = {"focuscrawl.addon.FocusCrawlAddon": 0}\nFOCUSCRAWL_SHARK_GAMMA = 7\n'
    )
    proc = crawl(
        tmp_path, "-a", "topic=birds", "-a", "seeds=http://127.0.0.2:9/",
        settings_module="otherproject.settings",
    )  # fmt: skip
    assert proc.returncode == 2
    assert error_lines(proc)[-1].endswith(
        "focuscrawl: error: FOCUSCRAWL_SHARK_GAMMA must be a number between 0 and 1, got 7"
    )
    assert "Traceback" not in proc.stderr and "Spider opened" not in proc.stderr


@pytest.mark.slow
def test_a_crawl_that_fetched_nothing_says_why_per_seed_and_exits_3(tmp_path: Path) -> None:
    from tests.conftest import free_port

    refused = f"http://127.0.0.2:{free_port()}/"  # nothing listens there
    blocked = f"http://127.0.0.99:{free_port()}/x"  # not in FOCUSCRAWL_ALLOW_PRIVATE
    proc = crawl(
        tmp_path, "-a", "topic=birds", "-a", f"seeds={refused},{blocked}",
        "-s", "FOCUSCRAWL_ALLOW_PRIVATE=127.0.0.2", "-s", "RETRY_TIMES=0",
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "Nothing was fetched (finished)." in proc.stderr
    assert f"seed {refused}: connection refused" in proc.stderr
    assert f"seed {blocked}: address not allowed (FOCUSCRAWL_ALLOW_PRIVATE)" in proc.stderr


def test_help_has_no_markup_and_every_command_a_working_example() -> None:
    import shlex

    from focuscrawl.cli import _command_modules, build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    for mod in _command_modules():
        argv = shlex.split(mod.EXAMPLE.split(">")[0])
        assert argv[:2] == ["focuscrawl", mod.NAME]
        parser.parse_args(argv[1:])  # the example's options exist (SystemExit otherwise)
        sub = subparser(parser, mod.NAME)
        texts.append(sub.format_help())
        assert f"example:\n  {mod.EXAMPLE}" in texts[-1]
    for text in texts:
        assert ":mod:" not in text and "``" not in text and ":class:" not in text


def subparser(parser, name):  # type: ignore[no-untyped-def]
    import argparse

    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices[name]
