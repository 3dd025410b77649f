"""What the real-browser tests share: Debian's chromium and ``focuscrawl serve`` on a free port."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("FOCUSCRAWL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


@contextmanager
def serving(*args: str) -> Iterator[str]:
    """``focuscrawl serve --port 0 <args>``; yields its address once its ready line is out."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl.cli", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the ready line: the server is listening
    try:
        assert line, f"focuscrawl serve exited with {proc.wait()}"
        yield json.loads(line)["url"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian chromium driven by Playwright (scripts/setup-system installs it)."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"{CHROMIUM} missing (scripts/setup-system installs it: apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()
