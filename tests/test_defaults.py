from __future__ import annotations

from pathlib import Path

from focuscrawl.defaults import DEFAULTS, SETTINGS, markdown_table


def test_every_setting_is_namespaced_documented_and_unique() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    assert all(n.startswith("FOCUSCRAWL_") and s.doc for n, s in zip(names, SETTINGS, strict=True))
    assert set(DEFAULTS) == set(names)


def test_readme_settings_table_is_current() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme, "regenerate with: python -m focuscrawl.defaults --readme"
