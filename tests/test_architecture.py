"""The house rules, read from the imports (issues 19 and 26).

- The algorithm packages (``blocks``, ``relevance``, ``strategy``, ``frontier``, ``change``,
  ``index``) never
  import a Scrapy adapter, a spider, a command, the web UI or the evaluation harness.
- Their modules do not reach Scrapy or Twisted, even through other modules: an algorithm is
  usable on a string of HTML. The frontier's thin Scrapy scheduler and its helpers (DESIGN.md:
  "pure core + thin Scrapy scheduler") are the one named exception.
- No import circle between focuscrawl modules (lazy imports inside functions, and
  ``importlib.import_module("...")`` with a literal name, count too).
- The frontier does not import the change store (the pop-ahead read is handed to it), nor the
  link strategy (the scheduler is handed its scores).
- The product (``focuscrawl``) never imports the evaluation harness (``focuseval``, a
  distribution of its own whose CLI commands are found by entry point); the harness may import
  the product.
- The compiled walk (``blocks/_cwalk.pyx``) imports only leaf modules, and no private name of
  them (docs/blocks.md).
- Three floors (DESIGN.md): imports point down or sideways, never up; the few that point up
  today are listed, so a new one fails.

Every import statement is read with ``ast`` (the ``.pyx``'s Python-level imports by line), so
a lazy import inside a function counts.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "focuscrawl"
ALGORITHMS = ("blocks", "relevance", "strategy", "frontier", "change", "index")
# what an algorithm package may never import, directly or lazily
ADAPTERS = (
    "focuscrawl.spiders",
    "focuscrawl.commands",
    "focuscrawl.scrapy_commands",
    "focuscrawl.middlewares",
    "focuscrawl.pipelines",
    "focuscrawl.extensions",
    "focuseval",
    "focuscrawl.addon",
    "focuscrawl.cli",
    "focuscrawl.web",
)
FRAMEWORKS = ("scrapy", "twisted")
# The frontier's Scrapy side: the scheduler and what only it uses (the Request <-> entry codec,
# the address guard on pops, the outage pause on the reactor).
SCRAPY_SIDE = frozenset(
    {
        "focuscrawl.frontier.scheduler",
        "focuscrawl.frontier.requests",
        "focuscrawl.frontier.guard",
        "focuscrawl.frontier.outage",
    }
)

Graph = dict[str, set[str]]

HARNESS = "focuseval"
WALK = "focuscrawl.blocks._cwalk"
WALK_LOADER = (WALK, "focuscrawl.blocks.compiled")
# DESIGN.md's three floors, top first, with every package and top-level module placed: the
# Scrapy-facing parts; the algorithms that use a parsed page and the queues (with the cluster's
# and the near-duplicates' parts, which sit on the frontier and the change store); what stands
# alone, with the small shared modules every floor uses (text, topic, settings registry, …).
FLOORS = (
    frozenset(
        {"spiders", "middlewares", "pipelines", "commands", "extensions", "web", "addon", "cli",
         "scrapy_commands", "settings"}
    ),
    frozenset({"relevance", "strategy", "change", "frontier", "cluster", "dedup"}),
    frozenset(
        {"blocks", "index", "archive", "render", "text", "topic", "defaults", "validation",
         "errors", "crawlstop", "credentials", "faults", "items", "netguard", "signals",
         "terminal", "meta"}
    ),
)  # fmt: skip
FLOOR_NAMES = ("top", "middle", "bottom")


def module_name(path: Path, root: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


IMPORT_MODULE = ("import_module", "__import__")
# a Python-level import line of a Cython module (``cimport`` lines are C-level: not modules)
_CODE_NOISE = re.compile(r'"""(?:.|\n)*?"""|#[^\n]*')
_PYX_IMPORT = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+import\s+(.+)|import\s+(.+))$", re.M)


def imported_names(path: Path, package: str) -> list[str]:
    """Every module name ``path`` imports (each ``from a import b`` as ``a`` and ``a.b``)."""
    if path.suffix == ".pyx":
        return _pyx_imports(path.read_text(encoding="utf-8"), package)
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            names += [base] + [f"{base}.{a.name}" for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
            in IMPORT_MODULE
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.append(node.args[0].value)
    return names


def _absolute(module: str, level: int, package: str) -> str:
    if not level:
        return module
    anchor = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join([*anchor, module] if module else anchor)


def _pyx_imports(text: str, package: str) -> list[str]:
    names: list[str] = []
    for m in _PYX_IMPORT.finditer(text):
        if m.group(3):
            names += [n.split(" as ")[0].strip() for n in m.group(3).split(",")]
            continue
        dots = len(m.group(1)) - len(m.group(1).lstrip("."))
        base = _absolute(m.group(1).lstrip("."), dots, package)
        members = [n.split(" as ")[0].strip(" ()") for n in m.group(2).split(",")]
        names += [base] + [f"{base}.{n}" for n in members if n]
    return names


def import_graph(root: Path) -> Graph:
    """Module -> what it imports: package modules by full name, third-party by top name."""
    paths = {module_name(p, root): p for p in (*root.rglob("*.py"), *root.rglob("*.pyx"))}
    graph: Graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for t in imported_names(path, package):
            if t in paths:
                found.add(t)
            elif t.split(".")[0] != root.name:
                found.add(t.split(".")[0])
        found.discard(name)
        graph[name] = found
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """Import circles (strongly connected components of more than one module); a package's
    ``__init__`` importing its own submodules is not a circle."""
    edges = {
        m: {d for d in ds if d in graph and not d.startswith(m + ".")} for m, ds in graph.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = itertools.count()

    def visit(v: str) -> None:  # Tarjan; the module graph is shallow
        index[v] = low[v] = next(counter)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def reaches(graph: Graph, start: str, targets: Iterable[str]) -> list[str]:
    """The import chain from ``start`` to the first of ``targets`` it reaches, or []."""
    wanted = set(targets)
    parent: dict[str, str] = {}
    queue = [start]
    seen = {start}
    while queue:
        m = queue.pop(0)
        for d in sorted(graph.get(m, ())):
            if d in seen:
                continue
            parent[d] = m
            if d in wanted or any(d.startswith(t + ".") for t in wanted):
                chain = [d]
                while chain[-1] != start:
                    chain.append(parent[chain[-1]])
                return chain[::-1]
            seen.add(d)
            queue.append(d)
    return []


def algorithm_modules(graph: Graph, root: str = "focuscrawl") -> list[str]:
    return sorted(m for m in graph if m.split(".")[1:2] and m.split(".")[1] in ALGORITHMS)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return import_graph(ROOT)


def test_algorithm_packages_never_import_adapters_commands_or_evaluation(graph: Graph) -> None:
    bad = [
        f"{m} imports {d}"
        for m in algorithm_modules(graph)
        for d in sorted(graph[m])
        if any(d == a or d.startswith(a + ".") for a in ADAPTERS)
    ]
    assert not bad, "\n".join(bad)


def test_algorithms_reach_no_scrapy_or_twisted(graph: Graph) -> None:
    bad = []
    for m in algorithm_modules(graph):
        if m in SCRAPY_SIDE:
            continue
        chain = reaches(graph, m, FRAMEWORKS)
        if chain:
            bad.append(" -> ".join(chain))
    assert not bad, "\n".join(bad)


def test_no_import_circles(graph: Graph) -> None:
    assert cycles(graph) == []


def test_the_frontier_knows_no_change_store(graph: Graph) -> None:
    """The pop-ahead change-store read is handed to the frontier (frontier/prefetch.py): no
    frontier module imports the change package, so the frontier does not know its keys."""
    bad = [
        f"{m} imports {d}"
        for m in algorithm_modules(graph)
        if m.startswith("focuscrawl.frontier.")
        for d in sorted(graph[m])
        if d.startswith("focuscrawl.change")
    ]
    assert not bad, "\n".join(bad)


def frontier_strategy_imports(graph: Graph) -> list[str]:
    """The frontier orders what it is handed: no chain from it into the link strategy."""
    chains = (reaches(graph, m, ["focuscrawl.strategy"]) for m in sorted(graph))
    return [" -> ".join(c) for c in chains if c and c[0].startswith("focuscrawl.frontier.")]


def test_the_frontier_knows_no_link_strategy(graph: Graph) -> None:
    bad = frontier_strategy_imports(graph)
    assert not bad, "\n".join(bad)


def harness_imports(graph: Graph) -> list[str]:
    """Product modules importing the evaluation harness (``focuseval``), lazily too."""
    return [f"{m} imports {HARNESS}" for m in sorted(graph) if HARNESS in graph[m]]


def test_the_product_never_imports_the_harness(graph: Graph) -> None:
    bad = harness_imports(graph)
    assert not bad, "\n".join(bad)


def _without_package_inits(graph: Graph) -> Graph:
    """The graph without a module's import of its own packages (``from focuscrawl.blocks
    import rules`` runs ``blocks/__init__`` once; that is not what the module depends on)."""
    return {m: {d for d in ds if not m.startswith(d + ".")} for m, ds in graph.items()}


def walk_violations(graph: Graph, root: Path) -> list[str]:
    """The compiled walk imports only leaf modules (none leads back to the walk or its
    loader) and reads no private name of them (docs/blocks.md)."""
    bad = []
    own = _without_package_inits(graph)
    for d in sorted(own.get(WALK, ())):
        if d.startswith(root.name + "."):
            chain = reaches(own, d, WALK_LOADER)
            if chain:
                bad.append(f"{WALK} imports {d}, not a leaf: " + " -> ".join(chain))
    text = (root / "blocks" / "_cwalk.pyx").read_text(encoding="utf-8")
    code = _CODE_NOISE.sub("", text)  # a docstring or comment may name what it mirrors
    for alias in sorted(_pyx_module_aliases(text, graph)):
        for private in sorted(set(re.findall(rf"(?<![\w.]){alias}\.(_\w+)", code))):
            bad.append(f"{WALK} reads {alias}.{private}, a private name")
    return bad


def _pyx_module_aliases(text: str, graph: Graph) -> set[str]:
    """The names the ``.pyx`` binds to package modules (``from a import b as c``: c)."""
    aliases = set()
    for m in _PYX_IMPORT.finditer(text):
        if m.group(1):
            for member in m.group(2).split(","):
                name, _, alias = member.strip(" ()").partition(" as ")
                if f"{m.group(1)}.{name.strip()}" in graph:
                    aliases.add((alias or name).strip())
        else:
            for member in m.group(3).split(","):
                name, _, alias = member.strip().partition(" as ")
                if name.strip() in graph and alias:
                    aliases.add(alias.strip())
    return aliases


def test_the_compiled_walk_imports_only_leaf_modules(graph: Graph) -> None:
    assert WALK in graph, "blocks/_cwalk.pyx not read"
    bad = walk_violations(graph, ROOT)
    assert not bad, "\n".join(bad)


def floor_of(module: str) -> int | None:
    part = module.split(".")[1] if "." in module else ""
    return next((i for i, names in enumerate(FLOORS) if part in names), None)


def floor_violations(graph: Graph) -> list[str]:
    """Imports pointing up a floor (DESIGN.md), and modules of no floor."""
    bad = []
    for m in sorted(graph):
        if not m.startswith("focuscrawl."):
            continue
        floor = floor_of(m)
        if floor is None:
            bad.append(f"{m} is on no floor (FLOORS)")
            continue
        for d in sorted(graph[m]):
            up = floor_of(d) if d.startswith("focuscrawl.") else None
            if up is not None and up < floor:
                bad.append(f"{m} ({FLOOR_NAMES[floor]}) imports {d} ({FLOOR_NAMES[up]})")
    return bad


def test_imports_point_down_the_floors(graph: Graph) -> None:
    bad = floor_violations(graph)
    assert not bad, "\n".join(bad)


def test_the_page_judgement_and_the_frontier_know_no_link_strategy(graph: Graph) -> None:
    """The page judgement (``relevance``) does not know the link strategy that learns from it,
    and the frontier, whose request state the strategy writes, imports neither (issue 26)."""
    bad = [
        f"{m} imports {d}"
        for m in algorithm_modules(graph)
        if m.startswith(("focuscrawl.relevance", "focuscrawl.frontier"))
        for d in sorted(graph[m])
        if d.startswith("focuscrawl.strategy")
        or (m.startswith("focuscrawl.frontier") and d.startswith("focuscrawl.relevance"))
    ]
    assert not bad, "\n".join(bad)


def test_one_tokeniser_for_the_crawler(graph: Graph) -> None:
    """The crawl's word tokeniser lives in focuscrawl.text; nothing defines another copy.

    (Change detection's ``change.terms`` is not a second copy of it: it keeps numbers and masks
    volatile tokens, because a changed price is a change; the index's query parser follows
    SQLite's ``unicode61`` tokeniser, which the index is searched with.)"""
    defining = []
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "fast_tokens" for n in ast.walk(tree)):
            defining.append(module_name(path, ROOT))
    assert defining == ["focuscrawl.text"]
    users = {m for m, ds in graph.items() if "focuscrawl.text" in ds}
    for package in ("relevance", "strategy", "index"):
        assert any(m.startswith(f"focuscrawl.{package}.") for m in users), package


# --- the checks themselves can fail: a small package with every fault --------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "focuscrawl"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def test_the_checks_find_circles_adapter_imports_and_framework_chains(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "blocks/__init__.py": "",
            "blocks/a.py": "from focuscrawl.blocks import b\n",
            "blocks/b.py": "def f():\n    from . import a\n",
            "change/__init__.py": "",
            "change/c.py": "from focuscrawl.change.d import x\n",
            "change/d.py": "import scrapy\nx = 1\n",
            "index/__init__.py": "",
            "index/e.py": "def g():\n    from focuseval import harness\n",
        },
    )
    g = import_graph(root)
    assert cycles(g) == [["focuscrawl.blocks.a", "focuscrawl.blocks.b"]]
    assert reaches(g, "focuscrawl.change.c", FRAMEWORKS) == [
        "focuscrawl.change.c",
        "focuscrawl.change.d",
        "scrapy",
    ]
    assert "focuseval" in g["focuscrawl.index.e"]
    assert reaches(g, "focuscrawl.blocks.a", FRAMEWORKS) == []


def test_the_checks_find_dynamic_circles_harness_strategy_walk_and_floor_faults(
    tmp_path: Path,
) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "blocks/__init__.py": "",
            # a circle through importlib.import_module with a literal name
            "blocks/a.py": "import importlib\nB = importlib.import_module('focuscrawl.blocks.b')\n",
            "blocks/b.py": "from importlib import import_module\n"
            "def f():\n    return import_module('focuscrawl.blocks.a')\n",
            # the walk imports a leaf, a module that loads the walk, and reads a private name
            "blocks/rules.py": "X = 1\n",
            "blocks/segment.py": "from focuscrawl.blocks.compiled import cwalk\n_cache = {}\n",
            "blocks/compiled.py": "def cwalk():\n    from focuscrawl.blocks import _cwalk\n",
            "blocks/_cwalk.pyx": "cimport lxml.includes.etreepublic as cetree\n"
            "from focuscrawl.blocks import rules\n"
            "from focuscrawl.blocks import segment as _py\n"
            "cdef dict C = _py._cache\n",
            # up a floor: a bottom module importing the strategy
            "blocks/c.py": "def g():\n    from focuscrawl.strategy import s\n",
            "strategy/__init__.py": "",
            "strategy/s.py": "",
            # the frontier reaching the strategy through another module
            "frontier/__init__.py": "",
            "frontier/q.py": "from focuscrawl.frontier import r\n",
            "frontier/r.py": "from focuscrawl.strategy.s import *\n",
            # an adapter importing the harness; a module of no floor
            "spiders/t.py": "def h():\n    import focuseval.webs\n",
            "misc.py": "",
        },
    )
    g = import_graph(root)
    assert cycles(g) == [
        ["focuscrawl.blocks._cwalk", "focuscrawl.blocks.compiled", "focuscrawl.blocks.segment"],
        ["focuscrawl.blocks.a", "focuscrawl.blocks.b"],
    ]
    assert frontier_strategy_imports(g) == [
        "focuscrawl.frontier.q -> focuscrawl.frontier.r -> focuscrawl.strategy.s",
        "focuscrawl.frontier.r -> focuscrawl.strategy.s",
    ]
    assert harness_imports(g) == ["focuscrawl.spiders.t imports focuseval"]
    assert walk_violations(g, root) == [
        "focuscrawl.blocks._cwalk imports focuscrawl.blocks.segment, not a leaf: "
        "focuscrawl.blocks.segment -> focuscrawl.blocks.compiled",
        "focuscrawl.blocks._cwalk reads _py._cache, a private name",
    ]
    assert floor_violations(g) == [
        "focuscrawl.blocks.c (bottom) imports focuscrawl.strategy (middle)",
        "focuscrawl.blocks.c (bottom) imports focuscrawl.strategy.s (middle)",
        "focuscrawl.misc is on no floor (FLOORS)",
    ]
