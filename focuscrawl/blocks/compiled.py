"""The compiled partition (``_cwalk.pyx``), when it is built and current; None otherwise.

``pip install -e .`` builds it when a compiler is there. A module built from an older
``_cwalk.pyx`` (its ``ABI`` number is not :data:`CWALK_ABI`) is ignored with a warning, and the
pure-Python code runs instead (same pages). This module imports nothing of the package at
import time, so the modules that use the compiled helpers (``segment``, ``css``, ``markup``,
``partition``) do not import one another for it; ``_cwalk`` itself imports the Python
reference it mirrors (``segment``), so it is loaded on first use.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from types import ModuleType

# What the Python side expects of _cwalk (its ABI constant): bump both on a change of the
# compiled functions' signatures or results.
CWALK_ABI = 8

_loaded: list[ModuleType | None] = []


def cwalk() -> ModuleType | None:
    """The compiled module, or None when it is missing or out of date (warned once)."""
    if not _loaded:
        # _cwalk imports segment, and segment asks for _cwalk at its import: import segment
        # first, so that _cwalk is loaded once, by segment, whoever asks first.
        import_module("focuscrawl.blocks.segment")
    if not _loaded:
        try:
            from focuscrawl.blocks import _cwalk
        except ImportError:
            _cwalk = None  # type: ignore[assignment]
        if _cwalk is not None and getattr(_cwalk, "ABI", None) != CWALK_ABI:
            warnings.warn(
                "focuscrawl.blocks._cwalk is out of date (pip install -e . rebuilds it): "
                "using the pure-Python walk",
                RuntimeWarning,
                stacklevel=2,
            )
            _cwalk = None  # type: ignore[assignment]
        _loaded.append(_cwalk)
    return _loaded[0]
