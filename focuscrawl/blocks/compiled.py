"""The compiled partition (``_cwalk.pyx``), when it is built and current; None otherwise.

``pip install -e .`` builds it when a compiler is there, with :data:`CWALK_ABI` compiled in
(``setup.py`` reads it from here: its one declaration). A module built from an older
``_cwalk.pyx`` (its ``ABI`` is not :data:`CWALK_ABI`, or it no longer loads against the
Python modules) is ignored with a warning, and the pure-Python code runs instead (same pages).

``_cwalk`` imports only leaf modules of the package (``rules``, ``caches``, ``frames``,
``sheet``, ``survey``; see docs/blocks.md), and this module imports nothing of the package
at import time, so any module may ask for the compiled walk, at import time too.
"""

from __future__ import annotations

import warnings
from types import ModuleType

# What the Python side expects of _cwalk: bump it on a change of the compiled functions'
# signatures, results or the Python names they read, and rebuild (setup.py compiles it in).
CWALK_ABI = 11

_loaded: list[ModuleType | None] = []


def cwalk() -> ModuleType | None:
    """The compiled module, or None when it is missing or out of date (warned once)."""
    if not _loaded:
        stale = False
        try:
            from focuscrawl.blocks import _cwalk
        except ImportError:
            _cwalk = None  # type: ignore[assignment]
        except AttributeError:  # built from an older _cwalk.pyx: it reads names since moved
            _cwalk, stale = None, True  # type: ignore[assignment]
        if stale or (_cwalk is not None and getattr(_cwalk, "ABI", None) != CWALK_ABI):
            warnings.warn(
                "focuscrawl.blocks._cwalk is out of date (pip install -e . rebuilds it): "
                "using the pure-Python walk",
                RuntimeWarning,
                stacklevel=2,
            )
            _cwalk = None  # type: ignore[assignment]
        _loaded.append(_cwalk)
    return _loaded[0]
