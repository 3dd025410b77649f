from __future__ import annotations

import ast
from pathlib import Path

from scrapy.settings import Settings

from focuscrawl.defaults import DEFAULTS, SETTINGS, markdown_table, read


def test_every_setting_is_namespaced_documented_and_unique() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    assert all(n.startswith("FOCUSCRAWL_") and s.doc for n, s in zip(names, SETTINGS, strict=True))
    assert set(DEFAULTS) == set(names)


def test_readme_settings_table_is_current() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme, "regenerate with: python -m focuscrawl.defaults --readme"


# Read sites that still restate a default, in files another change owns: fixed there, then
# removed from here (the test fails on a stale entry too).
KNOWN_RESTATED: set[tuple[str, str]] = set()


def restated_defaults(root: Path) -> set[tuple[str, str]]:
    """``(file, setting)`` of every ``x.get*("FOCUSCRAWL_…", default)`` under ``root``: a read
    site passing its own default (literal or not) instead of the registry's
    (``defaults.read``, or the add-on's defaults). ``os.environ.get`` is not a settings read."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr.startswith("get")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).startswith("FOCUSCRAWL_")
            ):
                continue
            receiver = ast.unparse(node.func.value)
            if receiver.endswith("environ"):
                continue
            if len(node.args) > 1 or any(k.arg == "default" for k in node.keywords):
                found.add((path.relative_to(root.parent).as_posix(), node.args[0].value))
    return found


def test_no_read_site_restates_a_registry_default() -> None:
    root = Path(__file__).parents[1] / "focuscrawl"
    assert restated_defaults(root) == KNOWN_RESTATED, "read them with focuscrawl.defaults.read"


def test_the_scan_finds_restated_defaults(tmp_path: Path) -> None:
    root = tmp_path / "focuscrawl"
    root.mkdir()
    (root / "m.py").write_text(
        "def f(s, os):\n"
        "    s.getfloat('FOCUSCRAWL_A', 0.25)\n"
        "    s.crawler.settings.get('FOCUSCRAWL_B', default=DEFAULT_B)\n"
        "    s.getint('FOCUSCRAWL_C')\n"
        "    os.environ.get('FOCUSCRAWL_D', 'x')\n",
        encoding="utf-8",
    )
    assert restated_defaults(root) == {
        ("focuscrawl/m.py", "FOCUSCRAWL_A"),
        ("focuscrawl/m.py", "FOCUSCRAWL_B"),
    }


def test_read_takes_the_registry_default_and_type() -> None:
    bare = Settings()  # no add-on: the registry's default
    assert read(bare, "FOCUSCRAWL_RELEVANCE_THRESHOLD") == 0.0
    assert read(bare, "FOCUSCRAWL_HITS_EVERY") == 50
    assert read(bare, "FOCUSCRAWL_CHANGE_ENABLED") is True
    assert read(bare, "FOCUSCRAWL_CHANGE_NOISE") == {}
    given = Settings({"FOCUSCRAWL_HITS_EVERY": "7", "FOCUSCRAWL_CHANGE_ENABLED": "false"})
    assert read(given, "FOCUSCRAWL_HITS_EVERY") == 7
    assert read(given, "FOCUSCRAWL_CHANGE_ENABLED") is False
    assert {type(read(bare, s.name)) for s in SETTINGS} <= {bool, int, float, str, dict}


def test_experimental_settings_are_marked_in_the_table() -> None:
    table = markdown_table()
    experimental = [s for s in SETTINGS if s.experimental]
    assert experimental and len(experimental) < len(SETTINGS)
    for s in SETTINGS:
        row = next(r for r in table.splitlines() if r.startswith(f"| `{s.name}` |"))
        assert ("*Experimental.*" in row) is s.experimental, s.name
