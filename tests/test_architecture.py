"""The house rules, read from the imports (issue 19).

- The algorithm packages (``blocks``, ``relevance``, ``strategy``, ``frontier``, ``change``,
  ``index``) never
  import a Scrapy adapter, a spider, a command, the web UI or the evaluation harness.
- Their modules do not reach Scrapy or Twisted, even through other modules: an algorithm is
  usable on a string of HTML. The frontier's thin Scrapy scheduler and its helpers (DESIGN.md:
  "pure core + thin Scrapy scheduler") are the one named exception.
- No import circle between focuscrawl modules (lazy imports inside functions count too).
- The frontier does not import the change store: the pop-ahead read is handed to it.

Every import statement is read with ``ast``, so a lazy import inside a function counts.
"""

from __future__ import annotations

import ast
import itertools
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


def module_name(path: Path, root: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> Graph:
    """Module -> what it imports: package modules by full name, third-party by top name."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: Graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
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
