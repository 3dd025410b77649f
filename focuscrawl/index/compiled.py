"""The compiled tsvector steps (``_ctsv.pyx``), when built and current; None otherwise.

``pip install -e .`` builds ``focuscrawl.index._ctsv`` when a compiler and Cython are there,
with :data:`CTSV_ABI` compiled in (``setup.py`` reads it from here: its one declaration). A
module built from an older ``_ctsv.pyx`` (its ``ABI`` is not :data:`CTSV_ABI`) is ignored
with a warning and the pure-Python steps of :mod:`focuscrawl.index.pgtsvector` run instead:
they give the same bytes (tests/test_index_pgtsvector.py checks both on the same text).
``FOCUSCRAWL_INDEX_PURE_PYTHON=1`` in the environment takes the Python steps too.
"""

from __future__ import annotations

import os
import warnings
from types import ModuleType

# What the Python side expects of _ctsv: bump it on a change of the compiled functions'
# signatures or results, and rebuild (setup.py compiles it in).
CTSV_ABI = 2

_loaded: list[ModuleType | None] = []


def ctsv() -> ModuleType | None:
    """The compiled module, or None when missing, out of date (warned once) or turned off."""
    if not _loaded:
        module: ModuleType | None
        try:
            from focuscrawl.index import _ctsv as module  # type: ignore[attr-defined,no-redef,unused-ignore]
        except ImportError:
            module = None
        if module is not None and getattr(module, "ABI", None) != CTSV_ABI:
            warnings.warn(
                "focuscrawl.index._ctsv is out of date (pip install -e . rebuilds it): "
                "the tsvectors are built in pure Python",
                RuntimeWarning,
                stacklevel=2,
            )
            module = None
        if os.environ.get("FOCUSCRAWL_INDEX_PURE_PYTHON", "") not in ("", "0"):
            module = None
        _loaded.append(module)
    return _loaded[0]
