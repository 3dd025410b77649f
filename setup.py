"""Build the optional compiled page walk (focuscrawl/blocks/_cwalk.pyx), tsvector steps
(focuscrawl/index/_ctsv.pyx) and link judge steps (focuscrawl/strategy/_cjudge.pyx); metadata
is in pyproject.toml.

``pip install -e .`` compiles it with Cython against lxml's public C API (both come from
``[build-system] requires``). Without a compiler, Cython or lxml's headers the install still
succeeds and ``focuscrawl.blocks`` runs its pure-Python walk, which gives the same pages.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """A failed compile is a warning, not a failed install: the pure-Python walk remains."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any build failure falls back to Python
            print(
                f"focuscrawl: compiled walk not built ({exc}); using pure Python", file=sys.stderr
            )

    def copy_file(self, infile, outfile, *args, **kwargs):  # type: ignore[no-untyped-def]
        # In-place (editable) builds replace the module in the source tree: unlink it first, so
        # a process that has the old one loaded keeps its file instead of seeing it rewritten.
        if (
            isinstance(outfile, str)
            and outfile.endswith((".so", ".pyd"))
            and os.path.exists(outfile)
        ):
            os.remove(outfile)
        return super().copy_file(infile, outfile, *args, **kwargs)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            print(f"focuscrawl: {ext.name} not built ({exc}); using pure Python", file=sys.stderr)


def declared_abi(path: str, name: str) -> int:
    """``name`` of the module at ``path`` (read, not imported: it is declared once there)."""
    source = Path(path)
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return int(ast.literal_eval(node.value))
    raise RuntimeError(f"no {name} in {source}")


def extensions() -> list[Extension]:
    try:
        import lxml
        from Cython.Build import cythonize
    except ImportError:
        return []
    walk = Extension(
        "focuscrawl.blocks._cwalk",
        ["focuscrawl/blocks/_cwalk.pyx"],
        include_dirs=lxml.get_include(),
        define_macros=[
            (
                "FOCUSCRAWL_CWALK_ABI",
                str(declared_abi("focuscrawl/blocks/compiled.py", "CWALK_ABI")),
            )
        ],
        depends=["focuscrawl/blocks/compiled.py"],  # a new CWALK_ABI rebuilds it
    )
    # the client-built tsvector's steps (focuscrawl/index/compiled.py): pure C API, no lxml
    tsv = Extension(
        "focuscrawl.index._ctsv",
        ["focuscrawl/index/_ctsv.pyx"],
        define_macros=[
            ("FOCUSCRAWL_CTSV_ABI", str(declared_abi("focuscrawl/index/compiled.py", "CTSV_ABI")))
        ],
        depends=["focuscrawl/index/compiled.py"],
    )
    # the link judge's array steps (focuscrawl/strategy/compiled.py): pure C, no lxml; IEEE
    # operations in the NumPy code's order, never a multiply and an add fused into one
    judge = Extension(
        "focuscrawl.strategy._cjudge",
        ["focuscrawl/strategy/_cjudge.pyx"],
        define_macros=[
            (
                "FOCUSCRAWL_CJUDGE_ABI",
                str(declared_abi("focuscrawl/strategy/compiled.py", "CJUDGE_ABI")),
            )
        ],
        extra_compile_args=[] if sys.platform == "win32" else ["-ffp-contract=off"],
        depends=["focuscrawl/strategy/compiled.py"],
    )
    built = []
    for ext in (walk, tsv, judge):  # each on its own: one that fails leaves the other
        try:
            built += cythonize([ext], language_level=3, quiet=True)
        except Exception as exc:  # noqa: BLE001 - e.g. a Cython too old for the source
            print(f"focuscrawl: cythonize failed ({exc}); using pure Python", file=sys.stderr)
    return built


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
