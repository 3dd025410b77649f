"""Where the shared evaluation corpora live."""

from __future__ import annotations

import os
from pathlib import Path


def corpora_dir() -> Path | None:
    """``FOCUSCRAWL_CORPORA`` or ``../shared/corpora`` beside the project, if present."""
    env = os.environ.get("FOCUSCRAWL_CORPORA")
    if env:
        path = Path(env)
        return path if path.is_dir() else None
    here = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
    return here.resolve() if here.is_dir() else None


def default_cache_dir() -> Path:
    """Where the harness caches what it derives from the corpora (never inside the project):
    ``FOCUSCRAWL_CACHE`` or ``~/.cache/focuscrawl``."""
    return Path(os.environ.get("FOCUSCRAWL_CACHE", Path.home() / ".cache" / "focuscrawl"))
