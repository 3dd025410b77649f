"""The ``request.meta`` keys focuscrawl's components read and write, each named once.

A bottom-level module (it imports nothing): the spiders, middlewares and the frontier all take
the names from here. What a frontier entry may carry of them is :mod:`focuscrawl.frontier.trust`'s
rule list; which of them are dropped before a request is stored is
:mod:`focuscrawl.frontier.requests`'.
"""

from __future__ import annotations

#: the request's crawl state, a :class:`focuscrawl.frontier.state.RequestState` (score, depth,
#: parent, ...); stored in a frontier in its compact wire form
STATE_META = "focuscrawl"
#: the parsed :class:`focuscrawl.blocks.Page`, set by the partition middleware
PAGE_META = "focuscrawl_page"
#: the response's fingerprints (a dict), set by the conditional-GET middleware
FINGERPRINTS_META = "focuscrawl_fingerprints"
#: a full GET: the conditional-GET middleware sends no validators
NO_CONDITIONAL_META = "focuscrawl_no_conditional"
#: the size of the stored version whose validators a conditional GET sent
CONDITIONAL_SENT_META = "focuscrawl_conditional"
#: a shell page to fetch again in the browser (FOCUSCRAWL_RENDER_JS=auto)
RENDER_META = "focuscrawl_render"
#: the per-host politeness slot a cluster worker holds for the request (host, token)
HOST_SLOT_META = "_focuscrawl_host_slot"
#: hex fingerprint of the frontier entry a request was popped from
ENTRY_FP_META = "_focuscrawl_fp"
#: the download delay (seconds) the scheduler drew for the request: its slot waits exactly it
DELAY_META = "_focuscrawl_delay"
