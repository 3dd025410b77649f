"""Build a test-web site by corpus name, run it in the foreground, or as a subprocess handle.

``focuscrawl testweb`` prints ONE JSON line on stdout once every address is listening::

    {"port": 8123, "hosts": ["127.0.0.2", ...], "corpus": "synthetic", "seeds": {...}}

:class:`TestWebProcess` starts that command as a subprocess and waits for that line (no polling).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from focuscrawl.netguard import allow_private_value
from focuseval.server import bind_sockets, serve_forever
from focuseval.site import Site, loopback_hosts

CORPORA = (
    "synthetic",
    "evolving",
    "evolving-signals",
    "wikispeedia",
    "dressed",
    "hostile",
    "hostile-mix",
    "mirrored",
    "jsweb",
)
DEFAULT_HOSTS = {
    "synthetic": 6,
    "evolving": 3,
    "evolving-signals": 5,
    "wikispeedia": 8,
    "dressed": 65,  # 64 sites in real chrome and the external host (404 only)
    "hostile": 1,
    "hostile-mix": 7,
    "mirrored": 4,
    "jsweb": 6,
}
_MAIN = "import sys; from focuscrawl.cli import main; sys.exit(main())"


def build_site(
    corpus: str,
    port: int,
    hosts: list[str],
    corpora: Path | None = None,
    seed: int = 7,
    pages: int = 0,
) -> Site:
    """The site for ``corpus`` with absolute links on ``port`` (``pages``: the synthetic web's
    size, 0 for its default)."""
    if corpus == "synthetic":
        from focuseval.synthetic import SyntheticWeb

        return SyntheticWeb(hosts=hosts, port=port, seed=seed, **_size(pages))
    if corpus == "evolving":  # 600 synthetic pages, 10 of them changed at each /_evolve/<cycle>
        from focuseval.evolving import synthetic_evolving

        return synthetic_evolving(hosts=hosts, port=port, seed=seed)
    if corpus == "evolving-signals":  # the evolving web, its hosts' sitemaps/feeds of 5 kinds
        from focuseval.evolving_signals import synthetic_signal_web

        return synthetic_signal_web(hosts, port, seed)  # type: ignore[return-value]
    if corpus == "wikispeedia":
        from focuseval.wikispeedia import WikispeediaCorpus, WikispeediaSite

        return WikispeediaSite(WikispeediaCorpus.open(corpora), hosts=hosts, port=port)
    if corpus == "dressed":  # the Wikispeedia articles in real sites' chrome (WCXB templates)
        from focuseval.dressed import open_dressed

        return open_dressed(hosts, port, corpora)
    if corpus == "mirrored":  # 20 % of the pages are copies (near-duplicates)
        from focuseval.mirrored import MirroredWeb

        return MirroredWeb(hosts, port, seed=seed, pages=pages)
    if corpus == "jsweb":  # 5 % of the articles are script shells; /js/ pages on the first host
        from focuseval.jsweb import ScriptWeb

        return ScriptWeb(hosts, port, seed=seed, **_size(pages))
    if corpus in ("hostile", "hostile-mix"):  # ordinary pages among hostile ones and traps
        from focuseval.hostile import HostileWeb

        return HostileWeb(hosts, port, mix=corpus == "hostile-mix", seed=seed, pages=pages)
    raise ValueError(f"unknown corpus {corpus!r}; expected one of {', '.join(CORPORA)}")


def _size(pages: int) -> dict[str, int]:
    return {"n_pages": pages} if pages else {}


def internal_hosts(corpus: str) -> list[str]:
    """Addresses the hostile web listens on only to count requests that must never come."""
    if corpus.startswith("hostile"):
        from focuseval.hostile import INTERNAL_HOSTS

        return list(INTERNAL_HOSTS)
    if corpus == "jsweb":
        from focuseval.jsweb import INTERNAL_HOST

        return [INTERNAL_HOST]
    return []


def ready_info(corpus: str, port: int, site: Site) -> dict[str, Any]:
    seeds = getattr(site, "seeds", {})
    info = {"port": port, "hosts": list(site.hosts), "corpus": corpus, "seeds": seeds}
    # what a crawl of this web needs: scrapy crawl ... -s FOCUSCRAWL_ALLOW_PRIVATE=<this>
    info["allow_private"] = allow_private_value(site.hosts)
    internal = getattr(site, "internal", None)
    if internal:  # listening only to count what reaches them: never to be allowed
        info["internal"] = list(internal)
    return info


def run_foreground(
    corpus: str,
    port: int = 0,
    n_hosts: int | None = None,
    corpora: Path | None = None,
    seed: int = 7,
    pages: int = 0,
    latency_ms: int = 0,
) -> None:
    """Bind, build, print the ready line, serve until killed (every response ``latency_ms``
    late)."""
    hosts = loopback_hosts(n_hosts or DEFAULT_HOSTS[corpus])
    port, socks = bind_sockets(hosts + internal_hosts(corpus), port)
    site = build_site(corpus, port, hosts, corpora, seed, pages)

    def ready() -> None:
        sys.stdout.write(json.dumps(ready_info(corpus, port, site)) + "\n")
        sys.stdout.flush()

    asyncio.run(serve_forever(site, socks, ready, latency_ms / 1000))


class TestWebProcess:
    """``focuscrawl testweb`` in a subprocess; a context manager. Ready when it says so."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        corpus: str = "synthetic",
        port: int = 0,
        hosts: int | None = None,
        corpora: Path | None = None,
        seed: int = 7,
        pages: int = 0,
        latency_ms: int = 0,
    ) -> None:
        self.corpus = corpus
        self.pages = pages
        self.latency_ms = latency_ms
        self.requested_port = port
        self.n_hosts = hosts
        self.corpora = corpora
        self.seed = seed
        self.proc: subprocess.Popen[str] | None = None
        self.info: dict[str, Any] = {}

    @property
    def port(self) -> int:
        return int(self.info["port"])

    @property
    def hosts(self) -> list[str]:
        return list(self.info["hosts"])

    @property
    def base_urls(self) -> list[str]:
        return [f"http://{h}:{self.port}" for h in self.hosts]

    @property
    def allow_private(self) -> str:
        """``FOCUSCRAWL_ALLOW_PRIVATE`` for a crawl of this web: its hosts, nothing else."""
        return allow_private_value(self.hosts)

    @property
    def seeds(self) -> dict[str, list[str]]:
        return dict(self.info.get("seeds", {}))

    def command(self) -> list[str]:
        # Not ``-m focuscrawl.cli``: run as __main__, its CommandError would be a second class.
        cmd = [sys.executable, "-c", _MAIN, "testweb", "--corpus", self.corpus]
        cmd += ["--port", str(self.requested_port), "--seed", str(self.seed)]
        if self.n_hosts:
            cmd += ["--hosts", str(self.n_hosts)]
        if self.pages:
            cmd += ["--pages", str(self.pages)]
        if self.latency_ms:
            cmd += ["--latency-ms", str(self.latency_ms)]
        if self.corpora:
            cmd += ["--corpora", str(self.corpora)]
        return cmd

    def start(self) -> TestWebProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            self.command(), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until ready or exit (EOF)
        if not line:
            code = self.proc.wait()
            raise RuntimeError(f"focuscrawl testweb exited with {code} before it was ready")
        self.info = json.loads(line)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self) -> TestWebProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
