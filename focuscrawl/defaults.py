"""Every ``FOCUSCRAWL_*`` setting, its default and what it does, in one place.

The add-on (:mod:`focuscrawl.addon`) applies these with ``"addon"`` priority, so a project's
``settings.py`` or ``-s NAME=VALUE`` overrides them. The README's settings table is generated
from this module (``python -m focuscrawl.defaults``) and a test keeps the two in step.

Each area of the crawler has its own section below; add a setting to the section of its area.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its default, what it does, and what values it takes.

    The type is the default's (bool, int, float or str); numbers are ``>= minimum`` (0 unless
    given) and ``<= maximum`` when one is given; ``choices`` lists the only values a string
    may take. :mod:`focuscrawl.validation` checks every crawl's settings against these before
    the engine starts."""

    name: str
    default: Any
    doc: str
    minimum: float | None = 0
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    #: a research knob (weights and internals of the link scoring, the learners, tunneling,
    #: ζ-IDOM contexts, change techniques, recrawl clusters): there for the evaluation harness
    #: and ablations, not for a crawl to need (README: *Experimental.*)
    experimental: bool = False


SETTINGS: list[Setting] = []


def _add(
    name: str,
    default: Any,
    doc: str,
    *,
    minimum: float | None = 0,
    maximum: float | None = None,
    choices: tuple[str, ...] = (),
    experimental: bool = False,
) -> None:
    assert name.startswith("FOCUSCRAWL_"), name
    SETTINGS.append(Setting(name, default, doc, minimum, maximum, choices, experimental))


#: the frontier strategies (``focuscrawl.strategy.scoring`` implements each; it imports this list)
STRATEGIES = (
    "bfs",
    "bestfirst",
    "sharksearch",
    "sharksearch-blocks",
    "sharksearch-blocks-tunnel",
    "hits",
    "learned",
)
FRACTION = {"minimum": 0.0, "maximum": 1.0}


# --- crawl, topic and export -------------------------------------------------------------
_add(
    "FOCUSCRAWL_CRAWL_LOG",
    "",
    "Path of a JSON-lines crawl log: one line per fetched response, in fetch order (`url`, `status`, `relevance`, `score`, …). Empty: off.",
)
_add(
    "FOCUSCRAWL_EXPORT_IRRELEVANT",
    True,
    "Export irrelevant pages too (marked `relevant: false`). False drops them from the export.",
)
_add(
    "FOCUSCRAWL_RELEVANCE_THRESHOLD",
    0.0,
    "A page whose relevance is at least this is `relevant`. 0: automatic for the cosine model (a fraction of the seed pages' mean relevance, `FOCUSCRAWL_AUTO_THRESHOLD`); learned models carry their own threshold.",
    **FRACTION,
)
_add(
    "FOCUSCRAWL_AUTO_THRESHOLD",
    0.35,
    "With `FOCUSCRAWL_RELEVANCE_THRESHOLD = 0` and the cosine model: the threshold as a fraction of the seed pages' mean relevance.",
    **FRACTION,
)
_add(
    "FOCUSCRAWL_AUTO_THRESHOLD_CALIBRATION",
    "otsu",
    "With the automatic threshold: `otsu` moves its fraction of the seeds' mean, every 25 pages from the 50th, to the Otsu split of the crawled pages' relevance (kept within 0.2-0.6); empty: the fixed `FOCUSCRAWL_AUTO_THRESHOLD`.",
    choices=("otsu", ""),
    experimental=True,
)
_add(
    "FOCUSCRAWL_STRATEGY",
    "sharksearch-blocks",
    "Frontier strategy: `bfs`, `bestfirst`, `sharksearch`, `sharksearch-blocks`, `sharksearch-blocks-tunnel`, `hits` (in-process frontier only) and `learned` (docs/strategies.md).",
    choices=STRATEGIES,
)
_add(
    "FOCUSCRAWL_DELAY_READY",
    "drawn",
    "Under `DOWNLOAD_DELAY`, when the frontier counts a host ready for its next request (the best entry of a ready host goes first; a request handed out early waits in its downloader slot holding one of the `CONCURRENT_REQUESTS`): `drawn`, the host's next delay drawn once from Scrapy's distribution (`DOWNLOAD_DELAY` x (1 +/- `DOWNLOAD_DELAY_JITTER`)) and carried by the request to its slot, which waits exactly it: ready when it has passed, so no request waits in a slot, and when every queued host waits nothing is handed out until the first is ready (with AutoThrottle, which sets the slots' delays itself: `mean`); `mean`, `DOWNLOAD_DELAY` after its last request (the slot draws again while a request waits); `longest`, at the jitter's longest (1.5 x `DOWNLOAD_DELAY` with Scrapy's default jitter: a host fetched at most once every 1.5 delays). Measured in docs/strategies.md (Under politeness).",
    choices=("drawn", "mean", "longest"),
)
_add(
    "FOCUSCRAWL_DIRECT_UPGRADES",
    True,
    "With the in-process frontier: a better score for a link queued from an earlier page (found again on a page with in-link votes or a better anchor; the `learned` judge's re-scores, some 200 every 25 pages) moves the queued URL up in the frontier directly instead of as a new request through the spider middlewares and the engine (the same scores; a URL that is not queued is never added, `focuscrawl/frontier/upgrade_absent`). False: sent as requests, as before. A Redis frontier always takes them as requests.",
)
_add(
    "FOCUSCRAWL_MAX_PAGE_BYTES",
    5 * 1024 * 1024,
    "Bodies larger than this are truncated before parsing (counted in `focuscrawl/skip/truncated`).",
)
_add(
    "FOCUSCRAWL_MAX_LINKS_PER_PAGE",
    5000,
    "Links recorded per page, in document order; the rest are not followed (pages counted in `focuscrawl/skip/links`, links in `focuscrawl/skip/links_dropped`). Their text still counts as link text for the partition.",
)
_add(
    "FOCUSCRAWL_PROGRESS_INTERVAL",
    60.0,
    "Seconds between progress log lines (pages, relevant, harvest rate); 0 turns it off.",
)
_add(
    "FOCUSCRAWL_DATA_DIR",
    "focuscrawl-data",
    "Directory for the embedded stores (change store, index) of a crawl.",
)
_add(
    "FOCUSCRAWL_DB_BUSY_TIMEOUT",
    60.0,
    "Seconds a write to the SQLite change store or index waits for another process's transaction (crawls sharing one data directory take turns); past it the crawl stops with a clear error.",
)

# --- frontier and scheduler --------------------------------------------------------------
_add(
    "FOCUSCRAWL_FRONTIER",
    "memory",
    "Frontier backend: `memory` (persisted under `JOBDIR` when set) or `redis` (chosen automatically when `REDIS_URL` is set).",
    choices=("memory", "redis"),
)
_add(
    "FOCUSCRAWL_HOST_SLOTS",
    0,
    "Per-host in-flight limit the scheduler respects when popping; 0 uses `CONCURRENT_REQUESTS_PER_DOMAIN`.",
)
_add(
    "FOCUSCRAWL_MAX_PAGES_PER_HOST",
    0,
    "Cap on pages scheduled per host (trap guard); 0 means no cap.",
)
_add(
    "FOCUSCRAWL_MAX_PATH_DEPTH",
    16,
    "URLs with more path segments than this are rejected as likely traps.",
    minimum=1,
)
_add(
    "FOCUSCRAWL_MAX_REPEATED_SEGMENTS",
    3,
    "URLs repeating one path segment more than this many times are rejected as likely traps.",
)
_add("FOCUSCRAWL_MAX_URL_LENGTH", 2048, "Longer URLs are rejected.", minimum=16)
_add(
    "FOCUSCRAWL_MAX_QUERY_VARIANTS",
    100,
    "Distinct query strings admitted per host and path (search, session-id and calendar traps); more are rejected (`focuscrawl/frontier/rejected/query_variants`). Counted per process in bounded memory; `dont_filter` requests are exempt; 0: no cap.",
)
_add(
    "FOCUSCRAWL_MAX_PAGES_PER_PATTERN",
    0,
    "Cap on pages scheduled per URL pattern (host, path and query names with digit runs folded: `/cal?m=#-#`); 0 means no cap.",
)
_add(
    "FOCUSCRAWL_QUARANTINE_AFTER",
    2,
    "Deaths of the process or worker *while working on* the URL (its work mark survived: JOBDIR resume, a restarted Redis worker on the same data dir; pages merely in flight are not counted) after which a URL is quarantined instead of queued again (`JOBDIR/quarantine.jsonl`, `<prefix>:quarantine`); 0 re-queues forever.",
)
_add(
    "FOCUSCRAWL_SHARK_DELTA",
    0.5,
    "Shark-Search δ: decay of the inherited score.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_BETA",
    0.8,
    "Shark-Search β: weight of the anchor score against the context score.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_GAMMA",
    0.5,
    "Shark-Search γ: weight of the inherited score against the neighbourhood score.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_VOTES",
    0.5,
    "In-link votes (Shark-Search strategies): weight of the summed scaled relevance of the relevant pages linking to a URL; 0 turns votes off.",
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_VOTE_SATURATION",
    0.5,
    "Soft cap of the in-link vote total (`s·(1 − e^(−total/s))`), so that a hub linked from every relevant page cannot outrank every on-topic anchor; 0: the plain sum.",
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_VOTE_GATED",
    False,
    "Weight a URL's vote bonus by its link's own anchor/context score, so that votes lift only on-topic-looking links (better where the topic continues behind irrelevant pages, as on the synthetic web; worse on Wikispeedia).",
    experimental=True,
)
_add(
    "FOCUSCRAWL_LINK_LEARNER",
    0.1,
    "Online link classifier (Shark-Search strategies): naive Bayes over the link features of the fetched pages, labelled by the relevance judgement; its probability minus the prior, times this weight, is added to a link's score. 0: off.",
    experimental=True,
)
_add(
    "FOCUSCRAWL_LINK_LEARNER_EVERY",
    25,
    "Pages between refits of the link classifier's weights.",
    minimum=1,
    experimental=True,
)
_add(
    "FOCUSCRAWL_LINK_LEARNER_FEATURES",
    "auh",
    "The link classifier's features: `a` anchor words, `u` URL path words, `h` host, `c` link-context words (carried in the request).",
    experimental=True,
)
_add(
    "FOCUSCRAWL_LINK_WORDS",
    0.75,
    'Body-word model (Shark-Search strategies): which words occur in more of the fetched relevant pages than of the irrelevant ones (document presence, naive Bayes log-odds), applied to a link\'s anchor and URL path words; its probability minus the prior, times this weight, is added to the link score. Lifts anchors that are names ("Bald Eagle") without a topic word. 0: off.',
    experimental=True,
)
_add(
    "FOCUSCRAWL_LINK_WORDS_TOP",
    200,
    "The body-word model learns only each page's this many most frequent words (what it is about, not every name it mentions once); 0: all its distinct words.",
    minimum=1,
    experimental=True,
)
_add(
    "FOCUSCRAWL_HITS_EVERY",
    50,
    "Strategy `hits`: pages between two recomputations of hubs and authorities over the fetched graph (the queued URLs are re-scored after each).",
    minimum=1,
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_BLOCK_MIX",
    0.5,
    "`sharksearch-blocks*`: share of the enclosing link block's relevance in a link's context score.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_NOISE_FLOOR",
    0.3,
    "`sharksearch-blocks*`: score multiplier of a link whose block weight is 0 (navigation, noise); 1 ignores block weights.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_SHARK_NORMALIZE",
    True,
    "Page relevance enters link scores as a fraction of the seed pages' mean relevance (one scale with the anchor and context scores).",
    experimental=True,
)
_add(
    "FOCUSCRAWL_TUNNEL_GREY",
    True,
    "Grey tunneling: links in relevant blocks of an irrelevant page are scored from their block.",
    experimental=True,
)
_add(
    "FOCUSCRAWL_TUNNEL_BLACK",
    True,
    "Black tunneling: follow links out of irrelevant pages up to a depth budget.",
    experimental=True,
)
_add(
    "FOCUSCRAWL_TUNNEL_MAX_DEPTH",
    3,
    "Largest black-tunneling budget (irrelevant hops) a very relevant ancestor grants.",
    experimental=True,
)
_add(
    "FOCUSCRAWL_TUNNEL_PENALTY",
    0.1,
    "Black tunneling: score multiplier per irrelevant hop past the budget.",
    **FRACTION,
    experimental=True,
)

# --- page partition (blocks) -------------------------------------------------------------
_add(
    "FOCUSCRAWL_LINK_CONTEXT_LEVELS",
    3,
    "ζ of the ζ-IDOM link context: DOM levels climbed from an anchor to its aggregation node "
    "(3 = best ROC AUC for target relevance on the Wikispeedia web, bench/bench_link_context.py).",
    experimental=True,
)
_add(
    "FOCUSCRAWL_LINK_CONTEXT_WORDS",
    20,
    "Words of link context kept on either side of an anchor (20 = best with ζ=3, same bench).",
    experimental=True,
)
_add(
    "FOCUSCRAWL_TEMPLATE_LINK_SHARE",
    0.5,
    "A link target on at least this share of a host's pages is template (menu, footer): marked "
    "noise. 0 turns template-link marking off.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_TEMPLATE_LINK_MIN_PAGES",
    5,
    "Pages of a host seen before its template links are marked.",
    minimum=1,
    experimental=True,
)
_add(
    "FOCUSCRAWL_BLOCK_MODEL",
    "",
    "Learned block classifier re-reading the partition's blocks: `builtin` (the JSON model "
    "shipped in focuscrawl/blocks, trained on wcxb-dev) or a path to one. Empty: the rules "
    "alone (the learned model does not beat them on held-out sites, docs/blocks.md).",
    experimental=True,
)
_add(
    "FOCUSCRAWL_KIND_MODEL",
    "",
    "Learned page kind (article, forum, product …) told from URL and DOM features in place of "
    "the rules' evidence: `builtin` (the JSON model shipped in focuscrawl/blocks, trained on "
    "wcxb-dev) or a path to one. Empty: the rules tell the kind (docs/blocks.md).",
    experimental=True,
)

# --- relevance ---------------------------------------------------------------------------
_add(
    "FOCUSCRAWL_MODEL",
    "",
    "Path of a model trained with `focuscrawl train` (also `-a model=`). Empty: TF-IDF cosine to the topic.",
)
_add(
    "FOCUSCRAWL_ADAPT_TOPIC",
    False,
    "Cosine model only: every page judged relevant (at or above the calibrated threshold) adds co-occurring terms to the topic profile (drift-guarded: original terms keep their weight, added weight at most 30%). Off: +0.024 recall @500 on Wikispeedia but a lower offline F1 on 2 of 3 topics (docs/strategies.md).",
)
_add(
    "FOCUSCRAWL_RETRAIN_EVERY",
    0,
    "Retrain a PU model from the crawl's own pages every N fetched pages, in a worker process (the crawl never waits); 0: off.",
)
_add(
    "FOCUSCRAWL_RETRAIN_SYNC",
    False,
    "Reproducible retraining: a retrain asked for (by `FOCUSCRAWL_RETRAIN_EVERY` or `FOCUSCRAWL_LABELS_RETRAIN`) is waited for (at most 300 s) and swapped in at once, so that the same crawl learns at the same page every time; the crawl stands still while the worker fits. Off: the crawl never waits.",
)
_add(
    "FOCUSCRAWL_LABELS",
    "",
    "The user's page labels (`focuscrawl label`, the review page of `focuscrawl serve`): a JSON-lines file; empty: `labels.jsonl` in `FOCUSCRAWL_DATA_DIR`. A crawl starts from them and reads new ones as it runs: an on-topic page teaches the topic as an example page does, and every labelled page is judged as labelled.",
)
_add(
    "FOCUSCRAWL_LABELS_RETRAIN",
    False,
    "Retrain the page model from the user's labels during the crawl, in a worker process (as `FOCUSCRAWL_RETRAIN_EVERY`, which it also honours), and re-score the queued links of the recent pages the new model judges more relevant. Off by default: its crawl-level gain on the held-out topics is below that of the labels alone (docs/relevance.md).",
    experimental=True,
)
_add(
    "FOCUSCRAWL_LABELS_POLL",
    25,
    "Pages between two looks at the label file for new labels; 0: read only when the crawl starts.",
)

# --- change detection and recrawl --------------------------------------------------------
_add(
    "FOCUSCRAWL_CHANGE_ENABLED",
    True,
    "Change detection: fingerprints, change status on every item, the change store, conditional GETs.",
)
_add(
    "FOCUSCRAWL_CHANGE_STORE",
    "auto",
    "Change store backend: `auto` (Redis when a Redis URL is set, else SQLite), `sqlite` (`<FOCUSCRAWL_DATA_DIR>/change.sqlite3`) or `redis`.",
    choices=("auto", "sqlite", "redis"),
)
_add(
    "FOCUSCRAWL_CHANGE_REDIS_PREFIX",
    "fc:chg",
    "Prefix of the Redis change-store keys (`P:meta`, `P:urls`, `P:p:<url>`; see docs/change.md).",
)
_add(
    "FOCUSCRAWL_CHANGE_MAX_HISTORY",
    64,
    "Visits kept per page for the change-rate estimators.",
    minimum=2,
)
_add(
    "FOCUSCRAWL_CHANGE_MIN_TERMS",
    1,
    "A content change is `significant` when at least this many words or numbers of the content were added plus removed (moves not counted) …",
)
_add(
    "FOCUSCRAWL_CHANGE_MIN_FRACTION",
    0.0,
    "… and at least this fraction of the old version's words and numbers.",
    **FRACTION,
)
_add(
    "FOCUSCRAWL_CHANGE_MASK_DATES",
    False,
    "Treat a bare date stamp (`April 23, 2025`, `2025-04-23`) as noise, like times and ids.",
)
_add(
    "FOCUSCRAWL_CHANGE_MIN_BLOCK_WEIGHT",
    0.1,
    "The `doc-index` technique only (the default classifier keeps every block but the page chrome): noise blocks at least this content-like count as content; cue-marked nav/ads/footer (0.05) do not.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_CHANGE_NOISE",
    {},
    'A site\'s own noise: `{URL glob: [regex, …]}`; text matching a regex on a page whose URL matches the glob is not a change (e.g. `{"https://example.org/*": ["Visitors today: \\\\d+"]}`).',
)
_add(
    "FOCUSCRAWL_CHANGE_SIMHASH_BITS",
    0,
    "The `simhash` detection technique reports a change when more bits than this differ.",
    maximum=64,
    experimental=True,
)
_add(
    "FOCUSCRAWL_CHANGE_DROP",
    True,
    "In a recrawl, drop (`DropItem`) items that are `unchanged` or `insignificant`; False passes them on with their status.",
)
_add(
    "FOCUSCRAWL_CONDITIONAL_GET",
    True,
    "Send If-None-Match / If-Modified-Since from the change store; a 304 is recorded as `unchanged`.",
)
_add(
    "FOCUSCRAWL_CHANGE_VALIDATE_EVERY",
    10,
    "Every N-th visit of a page is a full GET without validators, to catch servers whose ETag / Last-Modified lie; 0 never.",
)
_add(
    "FOCUSCRAWL_RECRAWL_BUDGET",
    0,
    "Pages a recrawl cycle revisits (the due list's length); 0 means every stored page.",
)
_add(
    "FOCUSCRAWL_RECRAWL_POLICY",
    "cluster",
    "Recrawl order: `uniform` (oldest visit first), `change-rate` (Cho & Garcia-Molina estimates) or `cluster` (sample each cluster first).",
    choices=("uniform", "change-rate", "cluster"),
)
_add(
    "FOCUSCRAWL_RECRAWL_PERIOD",
    86400.0,
    "Seconds between recrawl cycles: the time unit of the change-rate estimates and the revisit horizon.",
    minimum=1,
)
_add(
    "FOCUSCRAWL_RECRAWL_SAMPLE",
    0.2,
    "Cluster policy: fraction of each cluster fetched first as its sample.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_RECRAWL_CLUSTER_THRESHOLD",
    0.3,
    "Cluster policy: recrawl the rest of a cluster when at least this fraction of its sample changed significantly.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_CHANGE_WEBHOOK",
    "",
    "An http(s) URL that gets every significant change as a JSON POST (`url`, `title`, `diff`), from a thread of its own, through a durable outbox in `FOCUSCRAWL_DATA_DIR` (sent once; what a receiver down missed is sent later, by the next crawl if need be). The address policy (`FOCUSCRAWL_ALLOW_PRIVATE`) applies. Empty: off (docs/change.md).",
)
_add(
    "FOCUSCRAWL_CHANGE_WEBHOOK_SECRET",
    "",
    "With a webhook: sign each body, `X-Focuscrawl-Signature: sha256=<HMAC-SHA256>`; never logged.",
)
_add(
    "FOCUSCRAWL_CHANGE_WEBHOOK_RETRY",
    1.0,
    "Seconds before a failed webhook delivery is tried again; doubled on every failure, up to `FOCUSCRAWL_CHANGE_WEBHOOK_RETRY_MAX`.",
    minimum=0.001,
)
_add(
    "FOCUSCRAWL_CHANGE_WEBHOOK_RETRY_MAX",
    600.0,
    "The longest back-off between two tries of a webhook delivery, in seconds.",
    minimum=0.001,
)
_add(
    "FOCUSCRAWL_CHANGE_WEBHOOK_CLOSE_WAIT",
    10.0,
    "Seconds a closing crawl gives the webhook to deliver what is due; the rest waits in the outbox for the next crawl.",
)

_add(
    "FOCUSCRAWL_SIGNALS",
    False,
    "Read sitemaps (robots.txt `Sitemap:` lines, `/sitemap.xml`, indexes, gzip) and the RSS/Atom feeds pages link: their URLs enter the frontier scored like links, and in a recrawl a `lastmod` newer than the stored version makes a page due, trusted per host by what fetches prove (docs/change.md).",
)
_add(
    "FOCUSCRAWL_SIGNALS_MAX_BYTES",
    50 * 1024 * 1024,
    "Decompressed bytes read of one sitemap or feed (cut while decompressing: a gzip bomb stops here).",
    minimum=1024,
)
_add(
    "FOCUSCRAWL_SIGNALS_MAX_ENTRIES",
    50_000,
    "Entries read of one sitemap or feed (the sitemaps protocol's own limit).",
    minimum=1,
)
_add(
    "FOCUSCRAWL_SIGNALS_MAX_SITEMAPS",
    1000,
    "Sitemap and feed documents one worker reads in a crawl (indexes included; each at most once).",
    minimum=1,
)
_add(
    "FOCUSCRAWL_SIGNALS_MIN_CHECKS",
    6,
    "Fetches that must check a host's signals before a recrawl skips its pages whose `lastmod` did not move.",
    minimum=1,
    experimental=True,
)
_add(
    "FOCUSCRAWL_SIGNALS_MAX_ERROR",
    0.2,
    "Share of a host's checked signals that may prove wrong (stale or lying) before the recrawl ignores them.",
    **FRACTION,
    experimental=True,
)
_add(
    "FOCUSCRAWL_CHANGE_WRITE_DELAY",
    0.05,
    "Seconds a visit recorded in the Redis change store waits for others to share its write; its page is acknowledged only after the write's reply (a SIGKILL loses no acknowledged visit).",
    minimum=0.0,
)
_add(
    "FOCUSCRAWL_CHANGE_WRITER_THREAD",
    True,
    "Record visits in the SQLite change store from a thread of its own (never on the reactor), in fair turns with other crawls sharing the data directory (a lock file `change.sqlite3.turns`); a page is acknowledged once its visit is written, and the pages waiting for that write count in `FOCUSCRAWL_INDEX_PENDING_MAX` (before they did not: a killed crawl fetched up to 2x the in-flight bound again, docs/faults.md). False: visits recorded on the reactor, as before issue 29. The Redis change store is not concerned (it writes behind: `FOCUSCRAWL_CHANGE_WRITE_DELAY`).",
)

# --- cluster (Redis, scrapyd) ------------------------------------------------------------
_add(
    "FOCUSCRAWL_REDIS_URL",
    "",
    "Redis URL for the cluster frontier and change store (`REDIS_URL` works too). Empty: embedded backends.",
)
_add(
    "FOCUSCRAWL_REDIS_PREFIX",
    "focuscrawl:%(spider)s",
    "Prefix of every Redis key of a crawl (`%(spider)s` is the spider name); workers with the same prefix share one frontier.",
)
_add(
    "FOCUSCRAWL_REDIS_LEASE",
    300.0,
    "Seconds a popped request stays leased to its worker; unacknowledged past this (worker died), it returns to the frontier.",
    minimum=1,
)
_add(
    "FOCUSCRAWL_REDIS_CAPACITY",
    1_000_000,
    "Expected number of URLs: sizes the de-dup buckets (about 32 fingerprints per small hash) and the Bloom filter. Fixed when the crawl's keys are created.",
    minimum=1,
)
_add(
    "FOCUSCRAWL_REDIS_BLOOM_ERROR_RATE",
    0.0,
    "Above 0: fetched URLs are remembered in a Bloom filter on Redis bitmaps (about 1.2 bytes per URL at 0.01) with this false-positive rate at capacity; a false positive skips a never-fetched URL. 0: exact (about 10 bytes per URL).",
    minimum=0.0,
    maximum=0.5,
)
_add(
    "FOCUSCRAWL_REDIS_RETRY_TIMEOUT",
    600.0,
    "While Redis is unreachable or full, a crawl pauses (no request handed out, nothing lost, the reactor free) and tries again with back-off; past this many seconds it stops (reason `redis_unavailable`, resumable). Tools retry as long before failing.",
)
_add(
    "FOCUSCRAWL_REDIS_CLUSTER",
    False,
    "The Redis URL names a node of a Redis Cluster: the frontier, seen set and change store are sharded over its masters (keys with hash tags, one slot per Lua script).",
)
_add(
    "FOCUSCRAWL_REDIS_SHARDS",
    0,
    "Frontier shards on a Redis Cluster (a host's queue and politeness live in one shard); 0: 16 per master. Fixed when the crawl's keys are created.",
    maximum=4096,
)
_add(
    "FOCUSCRAWL_FRONTIER_PREFETCH",
    "focuscrawl.change.store_redis.prefetch_command",
    "Dotted path of the read the Redis frontier sends with each pop for the URL it popped (the change store's record); empty: none.",
)
_add(
    "FOCUSCRAWL_CLUSTER_POLITENESS",
    True,
    "With Redis: per-host concurrency and delay are shared by all workers (downloader middleware `focuscrawl.cluster.middleware.ClusterPolitenessMiddleware`).",
)
_add(
    "FOCUSCRAWL_CLUSTER_HOST_CONCURRENCY",
    0,
    "Cluster-wide in-flight limit per host; 0 uses `CONCURRENT_REQUESTS_PER_DOMAIN`.",
)
_add(
    "FOCUSCRAWL_CLUSTER_HOST_DELAY",
    0.0,
    "Cluster-wide seconds between two requests to one host; 0 uses `DOWNLOAD_DELAY`. A robots.txt `Crawl-delay` raises it for its host.",
)
_add(
    "FOCUSCRAWL_CLUSTER_MAX_CRAWL_DELAY",
    30.0,
    "Cap on a robots.txt `Crawl-delay` honoured by the cluster.",
)
_add(
    "FOCUSCRAWL_CLUSTER_STATS_INTERVAL",
    5.0,
    "Seconds between a worker's stats records in Redis (read by `focuscrawl status`).",
)
_add(
    "FOCUSCRAWL_JUDGE_SHARE",
    "outcomes",
    "With strategy `learned` and Redis: what the workers' link judges share through Redis. `outcomes`: one epoch counter and every judged page's outcome (each worker learns from the pages the others fetched); `epoch`: the epoch counter only (each worker learns from its own pages).",
    choices=("outcomes", "epoch"),
)

# --- index and search --------------------------------------------------------------------
_add(
    "FOCUSCRAWL_INDEX_ENABLED",
    True,
    "Keep a full-text index (SQLite FTS5) of the relevant pages, updated after change detection (`IndexPipeline`).",
)
_add(
    "FOCUSCRAWL_INDEX_PATH",
    "",
    "Path of the index database. Empty: `index.sqlite` in `FOCUSCRAWL_DATA_DIR`.",
)
_add(
    "FOCUSCRAWL_INDEX_COMMIT_EVERY",
    64,
    "The index commits after this many page updates, or `FOCUSCRAWL_INDEX_COMMIT_DELAY` after the first, whichever comes first; a page is acknowledged (and its version recorded in the change store) only once its update is committed.",
    minimum=1,
)
_add(
    "FOCUSCRAWL_INDEX_COMMIT_DELAY",
    0.1,
    "Seconds an index update waits for others to share its commit (a longer write transaction holds crawls sharing the data directory back longer).",
)
_add(
    "FOCUSCRAWL_INDEX_URL",
    "",
    "Where the index lives: a SQLite path, or a `postgresql://user@host/db` URL (one index for every worker of a cluster; `sslmode` and other libpq parameters pass through; the password is never logged, or comes from `PGPASSWORD` / `~/.pgpass`). Empty: `FOCUSCRAWL_INDEX_PATH`.",
)
_add(
    "FOCUSCRAWL_INDEX_RETRY_TIMEOUT",
    300.0,
    "With a PostgreSQL index: seconds a crawl waits (paused, nothing lost) for a dropped database connection to come back before it stops (resumable).",
)
_add(
    "FOCUSCRAWL_INDEX_CLIENT_TSVECTOR",
    True,
    "With a PostgreSQL index: the crawler builds each page's tsvector (PyStemmer's Snowball English, the server's token rules: the server's own vector for every Wikispeedia article it builds, docs/index.md) and sends it in binary, instead of the server running `to_tsvector`: the shared server's CPU per indexed page falls, for about 0.1 ms of the crawler's (its steps compiled, `_ctsv`; the pure-Python twin when the extension is not built): client plus server 0.29 ms a page against 0.40 ms with server-built vectors (docs/index.md). Used only when PyStemmer is installed and the server stems alike (checked on open); False: the server builds them.",
)
_add(
    "FOCUSCRAWL_INDEX_WRITER_THREAD",
    True,
    "Write the index in a thread of its own (never on the reactor): waiting for another crawl's write turn or a slow disk does not stop fetching or lease renewals. Crawls sharing the index take turns fairly (a lock file `index.sqlite.turns`), and the crawl pauses while `FOCUSCRAWL_INDEX_PENDING_MAX` pages wait (a SIGKILL leaves only about the pages in flight unacknowledged, as inline: docs/faults.md). False: written on the reactor (inline, the default before issue 29; several crawls sharing one data directory then wait on SQLite's unfair lock with their reactor blocked). On a PostgreSQL index the thread sends each batch with its COMMIT and takes no turns (no lock file); the crawl's throughput with PostgreSQL was 1.15x SQLite's with it, 0.90x without (docs/index.md).",
)
_add(
    "FOCUSCRAWL_INDEX_PENDING_MAX",
    0,
    "Pages not acknowledged — responses held in the scraper (waiting to be parsed or for their items, the index write among them) and, with `FOCUSCRAWL_CHANGE_WRITER_THREAD`, pages waiting for their visit's write — past which the crawl takes no new request until they drop below (the engine paused while the writer lags): pages not acknowledged are fetched again after a kill, so this bounds them as the inline commit does (about this many plus the `CONCURRENT_REQUESTS` downloading; checked as items reach the index, so a few more can slip in). 0: half the crawl's `CONCURRENT_REQUESTS`.",
    minimum=0,
)
_add(
    "FOCUSCRAWL_INDEX_QUEUE_SIZE",
    1024,
    "Index updates that may wait for the index writer thread; past it, items wait unanswered (back-pressure through Scrapy's scraper slot).",
    minimum=1,
)

# --- web archive (WARC) ------------------------------------------------------------------
_add(
    "FOCUSCRAWL_WARC_DIR",
    "",
    "Folder for WARC/1.1 files of every fetched response and its request (gzip per record, a CDXJ index per file, `revisit` records for 304 and unchanged pages). Empty: off.",
)
_add(
    "FOCUSCRAWL_WARC_MAX_BYTES",
    1024**3,
    "A WARC file is closed and the next one started once it passes this size.",
    minimum=1,
)
_add(
    "FOCUSCRAWL_WARC_PREFIX",
    "",
    "File name prefix of the WARC files (empty: the spider's name); the start time, host name and process id follow, so cluster workers never share a file.",
)

# --- near-duplicates ---------------------------------------------------------------------
_add(
    "FOCUSCRAWL_DEDUP",
    True,
    "Near-duplicate pages (on by default; False turns it off): a page whose main text is within `FOCUSCRAWL_DUPLICATE_BITS` of a page already fetched gets `duplicate_of` (that page's URL), is not judged or counted in the harvest again, and its links are not followed again (docs/dedup.md). With a Redis URL the index is shared by the crawl's workers (keys under `FOCUSCRAWL_REDIS_PREFIX`), else it is the process's own.",
)
_add(
    "FOCUSCRAWL_DUPLICATE_BITS",
    4,
    "Simhash bits (of 64, over the main text's word pairs) within which two pages are near-duplicates; 0: exact copies only (same content digest).",
    maximum=8,
)
_add(
    "FOCUSCRAWL_DUPLICATE_MIN_WORDS",
    20,
    "Pages whose main text has fewer words are never marked (too little text to call a copy: a listing, an empty script shell).",
)
_add(
    "FOCUSCRAWL_DUPLICATE_MAX_PAGES",
    2_000_000,
    "Pages the near-duplicate index remembers (about 85 bytes plus the URL each, bench/bench_dedup.py); past it pages are still compared with those kept. 0: no cap.",
)

# --- JavaScript pages (rendering) --------------------------------------------------------
_add(
    "FOCUSCRAWL_RENDER_JS",
    "never",
    "Render pages in a headless browser (scrapy-playwright with Debian's chromium; `pip install 'focuscrawl[render]'`): `never`; `auto` renders a page once when its HTML is an empty script shell (little visible text, a root element, scripts); `always` renders every request but robots.txt. The browser reaches only what the crawler may (docs/render.md).",
    choices=("never", "auto", "always"),
)
_add(
    "FOCUSCRAWL_RENDER_HOSTS",
    "",
    "Hosts (comma-separated; a name includes its subdomains) whose pages may be rendered. Empty: every host.",
)
_add(
    "FOCUSCRAWL_RENDER_BUDGET",
    100,
    "Pages rendered per host at most; past it the host's pages are used as fetched (`focuscrawl/render/skip/budget`). 0: no limit.",
)
_add(
    "FOCUSCRAWL_RENDER_CONCURRENCY",
    2,
    "Browser pages open at once (one browser, one context); further renders wait for a page.",
    minimum=1,
    maximum=64,
)
_add(
    "FOCUSCRAWL_RENDER_BROWSER",
    "/usr/bin/chromium",
    "The chromium executable that renders (no browser is downloaded).",
)

# --- network addresses -------------------------------------------------------------------
_add(
    "FOCUSCRAWL_ALLOW_PRIVATE",
    "",
    "Hosts, addresses or networks (CIDR), comma-separated, that the crawler may reach although they are private, loopback, link-local or otherwise not public (e.g. `127.0.0.2,10.1.0.0/16,intranet.example`). Every other such address is refused, after DNS and on every redirect (`focuscrawl/skip/address_blocked`); see docs/security.md.",
)

DEFAULTS: dict[str, Any] = {s.name: s.default for s in SETTINGS}
_GETTERS = {bool: "getbool", int: "getint", float: "getfloat", dict: "getdict", str: "get"}


def read(settings: Any, name: str) -> Any:
    """Setting ``name`` of Scrapy ``settings``, read as its default's type (``getint`` for an
    int, …), with the registry's default when ``settings`` lack it (a component built without
    the add-on): a read site never restates a default (``tests/test_defaults.py``)."""
    default = DEFAULTS[name]
    return getattr(settings, _GETTERS[type(default)])(name, default)


def describe(setting: Setting, quote: str = "'") -> str:
    """What values a setting takes, in words (the README's ``values`` column, with ``quote``
    a backtick)."""
    default = setting.default
    if setting.choices:
        shown = [f"{quote}{c}{quote}" if c else "empty" for c in setting.choices]
        return "one of " + ", ".join(shown)
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int | float):
        noun = "a whole number" if isinstance(default, int) else "a number"
        lo, hi = setting.minimum, setting.maximum
        if lo is not None and hi is not None:
            return f"{noun} between {_num(lo)} and {_num(hi)}"
        if lo is not None:
            return f"{noun} >= {_num(lo)}"
        if hi is not None:
            return f"{noun} <= {_num(hi)}"
        return noun
    if isinstance(default, dict):
        return "a mapping"
    return "text"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def markdown_table() -> str:
    """The README's settings table."""
    rows = ["| setting | default | values | what it does |", "| --- | --- | --- | --- |"]
    for s in SETTINGS:
        doc = f"*Experimental.* {s.doc}" if s.experimental else s.doc
        rows.append(f"| `{s.name}` | `{s.default!r}` | {describe(s, '`')} | {doc} |")
    return "\n".join(rows)


def update_readme(path: str = "README.md") -> None:
    """Rewrite the table between the README's ``settings-table`` markers."""
    import re
    from pathlib import Path

    readme = Path(path)
    text = readme.read_text(encoding="utf-8")
    block = f"<!-- settings-table -->\n{markdown_table()}\n<!-- /settings-table -->"
    text = re.sub(
        r"<!-- settings-table -->.*?<!-- /settings-table -->", lambda _: block, text, flags=re.S
    )
    readme.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--readme"]:
        update_readme()
    else:
        print(markdown_table())
