"""The synthetic web with script pages: text and links that exist only after scripts run.

``focuscrawl testweb --corpus jsweb`` serves the synthetic web where a share of the articles
(:data:`SCRIPT_SHARE`, chosen by a hash of the URL; never a seed) is sent as an empty script
shell: a ``<div id="root">``, a ``<noscript>`` asking for JavaScript and a script that mounts the
page's body from a base64 string. Without a browser the page is empty and its links are not
there; rendered, it is the synthetic page.

Besides, on the first host:

* ``/js/index.html``: an ordinary page linking to ``/js/app.html``;
* ``/js/app.html``: a shell whose rendered text names :data:`RENDERED_MARK` and links to
  ``/js/after-1.html`` … (pages no other page links to);
* ``/js/probe.html``: a shell whose script tries to reach what the crawler may not: the
  internal host (:data:`INTERNAL_HOST`, listening only to count what reaches it), a redirect
  to it, ``file:///etc/hostname``; ``/_canary`` says how many requests reached the internal host.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html import escape, unescape

from focuseval.site import Resource
from focuseval.synthetic import SyntheticWeb

SCRIPT_SHARE = 0.05
INTERNAL_HOST = "127.0.0.9"
RENDERED_MARK = "Peregrine falcons hunt birds over the rendered cliffs"
AFTER_PAGES = 3
APP_JS = b"""function mount(b64) {
  var bytes = Uint8Array.from(atob(b64), function (c) { return c.charCodeAt(0); });
  document.getElementById("root").innerHTML = new TextDecoder().decode(bytes);
}
"""
_BODY = re.compile(rb"<body[^>]*>(.*)</body>", re.S | re.I)
_TITLE = re.compile(rb"<title>(.*?)</title>", re.S | re.I)


def shell_page(title: str, body_html: str, extra_script: str = "") -> bytes:
    """An empty script shell that mounts ``body_html`` when its scripts run."""
    b64 = base64.b64encode(body_html.encode("utf-8")).decode("ascii")
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f'<title>{escape(title)}</title><script src="/_js/app.js"></script></head>'
        '<body><div id="root"></div>'
        "<noscript>You need to enable JavaScript to run this app.</noscript>"
        f'<script>mount("{b64}");{extra_script}</script></body></html>'
    ).encode()


def _plain(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>{escape(title)}</title></head>"
        f"<body><main><h1>{escape(title)}</h1>{body}</main></body></html>"
    ).encode()


class ScriptWeb:
    """:class:`SyntheticWeb` with script pages (see the module doc); a Site."""

    def __init__(
        self,
        hosts: list[str],
        port: int,
        seed: int = 7,
        n_pages: int = 3000,
        share: float = SCRIPT_SHARE,
    ) -> None:
        self.web = SyntheticWeb(hosts, port, seed=seed, n_pages=n_pages)
        self.hosts = self.web.hosts
        self.port = port
        self.host = self.hosts[0]
        self.internal = [INTERNAL_HOST]
        self.canary: list[str] = []
        self.seeds = {k: list(v) for k, v in self.web.seeds.items()}
        self.seeds["js"] = [f"http://{self.host}:{port}/js/index.html"]
        seeds = {u for urls in self.seeds.values() for u in urls}
        self.script_urls = {
            self.web.url(p)
            for p in self.web.pages
            if self.web.url(p) not in seeds and _chosen(self.web.url(p), share)
        }
        self._shells: dict[tuple[str, str], Resource] = {}
        for page in self.web.pages:
            if self.web.url(page) in self.script_urls:
                res = self.web.get(page.host, page.path)
                if res is not None:
                    self._shells[(page.host, page.path)] = Resource(_as_shell(res.body))
        self._js = self._js_pages()

    def get(self, host: str, path: str) -> Resource | None:
        if host in self.internal:
            self.canary.append(f"{host} {path}")
            return Resource(b"internal secret", "text/plain")
        if path == "/_js/app.js":
            return Resource(APP_JS, "application/javascript")
        if host == self.host:
            if path == "/_canary":
                body = json.dumps({"hits": len(self.canary), "paths": self.canary[-50:]})
                return Resource(body.encode(), "application/json")
            if path in self._js:
                return self._js[path]
        return self._shells.get((host, path)) or self.web.get(host, path)

    def robots(self, host: str) -> str:
        return self.web.robots(host)

    def _js_pages(self) -> dict[str, Resource]:
        internal = f"http://{INTERNAL_HOST}:{self.port}"
        after = "".join(
            f'<li><a href="/js/after-{n}.html">Falcon notes {n}</a></li>'
            for n in range(1, AFTER_PAGES + 1)
        )
        app = f"<h1>Falcons</h1><p>{RENDERED_MARK}.</p><ul>{after}</ul>"
        probe = (
            f"fetch('{internal}/from-fetch').catch(function(){{}});"
            "fetch('/js/to-internal').catch(function(){});"
            f"var i=new Image();i.src='{internal}/from-img';document.body.appendChild(i);"
            f"var f=document.createElement('iframe');f.src='{internal}/from-frame';"
            "document.body.appendChild(f);"
            "var g=document.createElement('iframe');g.src='file:///etc/hostname';"
            "document.body.appendChild(g);"
            "fetch('file:///etc/hostname').then(function(r){return r.text()})"
            ".then(function(t){document.body.append('FILE '+t)}).catch(function(){});"
        )
        pages = {
            "/js/index.html": Resource(
                _plain(
                    "Falcon app",
                    '<p>Falcons and other birds.</p><a href="/js/app.html">'
                    'The falcon app</a> <a href="/js/probe.html">Probe</a>',
                )  # fmt: skip
            ),
            "/js/app.html": Resource(shell_page("Falcon app", app)),
            "/js/probe.html": Resource(
                shell_page("Probe", "<p>Birds probe the network.</p>", probe)
            ),
            "/js/to-internal": Resource(
                b"", status=302, headers={"Location": f"{internal}/from-redirect"}
            ),
        }
        for n in range(1, AFTER_PAGES + 1):
            text = f"<p>Falcon notes {n}: birds of prey seen after rendering.</p>"
            pages[f"/js/after-{n}.html"] = Resource(_plain(f"Falcon notes {n}", text))
        return pages


def _chosen(url: str, share: float) -> bool:
    digest = hashlib.blake2b(url.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < share


def _as_shell(html: bytes) -> bytes:
    body = _BODY.search(html)
    title = _TITLE.search(html)
    return shell_page(
        unescape(title.group(1).decode("utf-8", "replace")) if title else "",
        (body.group(1) if body else html).decode("utf-8", "replace"),
    )
