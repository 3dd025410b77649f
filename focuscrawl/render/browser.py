"""How the browser is launched and what a rendered page may load: data, no Scrapy.

The address guard of the browser's traffic is :mod:`.proxy`; here are the launch options
(Debian's chromium by path, never a downloaded browser; no name resolution of its own; no
WebRTC around the proxy) and the requests a page's route aborts before they leave the page
(other schemes than http(s); images, media, fonts and style sheets, which a text crawl never
reads: the crawler does not fetch them either).
"""

from __future__ import annotations

import os
from typing import Any

ARGS = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--mute-audio",
    "--dns-prefetch-disable",
    # every connection goes to the guard proxy (a literal address): chromium resolves nothing
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    # WebRTC would open UDP around the proxy
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)
#: resource types a page loads that a text crawl never reads: aborted, never fetched
SKIPPED_RESOURCES = frozenset({"image", "media", "font", "stylesheet"})
#: the browser context every render uses: service workers would fetch outside page routes
CONTEXT_KWARGS: dict[str, Any] = {"service_workers": "block", "java_script_enabled": True}


def launch_options(executable: str, as_root: bool | None = None) -> dict[str, Any]:
    """Playwright ``launch`` options for ``executable``; chromium's sandbox is kept unless the
    crawl runs as root (where chromium refuses to start with it)."""
    if as_root is None:
        as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    args = list(ARGS)
    if as_root:
        args.append("--no-sandbox")
    return {"executable_path": executable, "headless": True, "args": args}


def abort_request(request: Any) -> bool:
    """``PLAYWRIGHT_ABORT_REQUEST``: whether a page's request is aborted before it is sent."""
    url: str = request.url
    if not url.startswith(("http://", "https://")):
        return not url.startswith(("data:", "blob:", "about:"))
    return request.resource_type in SKIPPED_RESOURCES
