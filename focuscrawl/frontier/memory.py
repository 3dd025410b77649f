"""The in-process frontier: per-host heaps under a heap of hosts, optionally journaled to disk.

Memory per queued URL is one tuple and one ``bytes`` payload (fingerprint + URL + JSON data);
de-duplication keys are the first 8 bytes of the request fingerprint as an ``int``. A URL found
again with a better score gets a new heap entry and the old one goes stale (lazy deletion).

With a journal path (under ``JOBDIR``), every push, pop and ack is appended with ``os.write``
(it reaches the kernel before the call returns, so a SIGKILL loses nothing written); opening
replays it and entries popped but never acked (in flight at the kill) are queued again. Only the
one the process was working on when it died (``JOBDIR/working.mark``,
:mod:`focuscrawl.frontier.workmark`) has an attempt counted; the others were bystanders. At
``quarantine_after`` attempts the entry is quarantined instead (see
:mod:`focuscrawl.frontier.quarantine`). A graceful close writes a release record for what is
still in flight: those come back without an attempt counted.

Every record is written before the memory changes (:mod:`focuscrawl.frontier.journal`: whole
records or nothing; after a failed write, e.g. a full disk, no more records): an ``OSError``
from ``push``, ``pop`` or ``ack`` leaves the frontier as it was. The JOBDIR is locked for the
process (one crawl per JOBDIR).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import json
import logging
import os
import time
from typing import Any

from focuscrawl.frontier.base import FrontierEntry, HostBusy, PushResult, host_of, never_busy
from focuscrawl.frontier.journal import Journal, claim_jobdir, release_jobdir
from focuscrawl.frontier.quarantine import Probation, QuarantineRecord, append_records
from focuscrawl.frontier.workmark import MARK_FILE, read_mark

logger = logging.getLogger(__name__)

_Entry = tuple[float, int, int, bytes]  # (-score, seq, key, payload)
FP_LEN = 20


def _key(fingerprint: bytes) -> int:
    return int.from_bytes(fingerprint[:8], "big")


def _payload(fingerprint: bytes, url: str, data: dict[str, Any]) -> bytes:
    fp = fingerprint[:FP_LEN].ljust(FP_LEN, b"\0")
    body = json.dumps(data, separators=(",", ":")) if data else ""
    return fp + url.encode() + b"\0" + body.encode()


def _unpack(payload: bytes) -> tuple[bytes, str, dict[str, Any]]:
    fp = payload[:FP_LEN]
    url, _, body = payload[FP_LEN:].partition(b"\0")
    return fp, url.decode(), (json.loads(body) if body else {})


class MemoryFrontier:
    def __init__(
        self,
        journal_path: str | None = None,
        quarantine_after: int = 0,
        quarantine_path: str | None = None,
    ) -> None:
        self.journal_path = journal_path
        self.quarantine_after = quarantine_after  # 0: re-queue forever (journaled runs only)
        self.quarantine_path = quarantine_path
        self.quarantined: list[QuarantineRecord] = []  # by this open(), for the scheduler
        self.redelivered = 0
        self._attempts: dict[int, int] = {}  # key → unacknowledged deliveries (suspects)
        self._quarantine: set[int] = set()  # quarantined keys (also in _seen)
        self._probation = Probation()
        self._seq = itertools.count()
        self._queued: dict[int, _Entry] = {}
        self._seen: set[int] = set()  # popped keys
        self._inflight: dict[int, _Entry] = {}  # popped, not acked (journaled runs only)
        self._hosts: dict[str, list[_Entry]] = {}
        self._host_heap: list[tuple[float, int, str]] = []
        self._host_top: dict[str, tuple[float, int]] = {}
        self._journal: Journal | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        if not self.journal_path:
            return
        jobdir = os.path.dirname(os.path.abspath(self.journal_path))
        claim_jobdir(jobdir)  # JobdirBusy: another crawl uses it
        try:
            if os.path.exists(self.journal_path):
                self._replay()
            if self.quarantined and self.quarantine_path:
                append_records(self.quarantine_path, self.quarantined)
            self._rewrite_journal()
        except BaseException:
            release_jobdir(jobdir)
            raise

    def close(self) -> None:
        journal, self._journal = self._journal, None
        if journal is None:
            return
        # not processed: back without an attempt (written even after a failed write)
        released = b"".join(
            json.dumps({"r": e[3][:FP_LEN].hex()}).encode() + b"\n" for e in self._inflight.values()
        )
        if released:
            journal.append_final(released)
        journal.close()
        assert self.journal_path is not None
        release_jobdir(os.path.dirname(os.path.abspath(self.journal_path)))

    # -- queue operations -----------------------------------------------------------------
    def push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> PushResult:
        result = self._push_result(_key(fingerprint), score, force)
        if result in (PushResult.ADDED, PushResult.UPGRADED):
            if self._journal is not None:  # written first: a failed write changes nothing
                self._log({"p": [url, score, fingerprint.hex(), data, force]})
            self._push(url, score, fingerprint, data, force)
        return result

    def upgrade(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any]
    ) -> PushResult:
        """Move a queued entry up to ``score`` with new ``data``; never queues what is not
        queued (``ABSENT``: fetched, never pushed, or refused when it was): a re-scoring that
        reaches the frontier without a request (:meth:`FocusScheduler.upgrade_queued`)."""
        old = self._queued.get(_key(fingerprint))
        if old is None:
            return PushResult.ABSENT
        if -old[0] >= score:
            return PushResult.QUEUED
        return self.push(url, score, fingerprint, data)

    def push_replacing(self, item: tuple[Any, ...], parent: bytes) -> PushResult:
        """Push a redirect or retry, then acknowledge the request it replaces: a failed write
        leaves the parent in flight (fetched again at resume), never the child lost."""
        result = self.push(*item)
        self.ack(parent)
        return result

    def _push_result(self, key: int, score: float, force: bool) -> PushResult:
        old = self._queued.get(key)
        if old is not None:
            return PushResult.QUEUED if -old[0] >= score else PushResult.UPGRADED
        if key in self._seen and (not force or key in self._quarantine):
            return PushResult.SEEN
        return PushResult.ADDED

    def _push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool
    ) -> PushResult:
        key = _key(fingerprint)
        result = self._push_result(key, score, force)
        if result in (PushResult.QUEUED, PushResult.SEEN):
            return result
        entry: _Entry = (-score, next(self._seq), key, _payload(fingerprint, url, data))
        self._queued[key] = entry
        host = host_of(url)
        heap = self._hosts.get(host)
        if heap is None:
            heap = self._hosts[host] = []
        heapq.heappush(heap, entry)
        top = self._host_top.get(host)
        if top is None or (entry[0], entry[1]) < top:
            self._host_top[host] = (entry[0], entry[1])
            heapq.heappush(self._host_heap, (entry[0], entry[1], host))
        return result

    def pop(self, busy: HostBusy = never_busy) -> FrontierEntry | None:
        skipped: list[tuple[float, int, str]] = []
        found: _Entry | None = None
        # a suspect in flight: hosts whose next entry is a suspect wait, as busy hosts do
        held = self._attempts if self._attempts and self._probation.blocking() else None
        while self._host_heap:
            item = heapq.heappop(self._host_heap)
            neg, seq, host = item
            if self._host_top.get(host) != (neg, seq):
                continue  # stale: a better entry of this host was pushed since
            if busy(host) or (held is not None and self._hosts[host][0][2] in held):
                skipped.append(item)
                continue
            found = self._pop_host(host)
            if found is not None:
                break
        for item in skipped:
            heapq.heappush(self._host_heap, item)
        if found is None:
            return None
        fingerprint, url, data = _unpack(found[3])
        attempts = 0
        if self._journal is not None:
            try:
                self._log({"x": fingerprint.hex()})
            except OSError:
                self._requeue(found)  # not written: as if it had not been popped
                raise
            self._inflight[found[2]] = found
            attempts = self._attempts.get(found[2], 0)
            if attempts:
                self._probation.delivered(found[2])
        return FrontierEntry(
            url=url, score=-found[0], fingerprint=fingerprint, data=data, attempts=attempts
        )

    def _pop_host(self, host: str) -> _Entry | None:
        heap = self._hosts[host]
        found = None
        while heap:
            entry = heapq.heappop(heap)
            if self._queued.get(entry[2]) is entry:
                found = entry
                break
        if found is not None:
            del self._queued[found[2]]
            self._seen.add(found[2])
        # drop stale tops so the host's next key is a live entry
        while heap and self._queued.get(heap[0][2]) is not heap[0]:
            heapq.heappop(heap)
        if heap:
            top = (heap[0][0], heap[0][1])
            self._host_top[host] = top
            heapq.heappush(self._host_heap, (top[0], top[1], host))
        else:
            del self._hosts[host]
            del self._host_top[host]
        return found

    def ack(self, fingerprint: bytes) -> None:
        key = _key(fingerprint)
        if self._journal is not None and key in self._inflight:
            self._log({"a": fingerprint.hex()})
            del self._inflight[key]
            if self._attempts.pop(key, None) is not None:
                self._probation.done(key)

    def seen(self, fingerprint: bytes) -> bool:
        key = _key(fingerprint)
        return key in self._seen or key in self._queued

    def __len__(self) -> int:
        return len(self._queued)

    # -- journal --------------------------------------------------------------------------
    def _log(self, record: dict[str, Any]) -> None:
        assert self._journal is not None
        self._journal.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")

    def _replay(self) -> None:
        assert self.journal_path is not None
        bad = 0
        with open(self.journal_path, "rb") as fh:
            for line in fh:
                try:
                    record = json.loads(line)
                except ValueError:
                    bad += 1  # a line cut by a kill mid-write
                    continue
                if "p" in record:
                    url, score, fp, data, force = record["p"]
                    self._push(url, score, bytes.fromhex(fp), data, force)
                elif "x" in record:
                    key = _key(bytes.fromhex(record["x"]))
                    entry = self._queued.pop(key, None)
                    if entry is not None:
                        self._inflight[key] = entry
                        self._seen.add(key)
                elif "s" in record:
                    self._seen.add(record["s"])
                elif "a" in record:
                    key = _key(bytes.fromhex(record["a"]))
                    self._inflight.pop(key, None)
                    self._attempts.pop(key, None)
                elif "r" in record:  # released by a graceful close: not an attempt
                    self._requeue(self._inflight.pop(_key(bytes.fromhex(record["r"])), None))
                elif "c" in record:
                    key, attempts = record["c"]
                    self._attempts[key] = attempts
                elif "q" in record:
                    self._seen.add(record["q"])
                    self._quarantine.add(record["q"])
        requeued = 0
        now = time.time()
        guilty = read_mark(os.path.join(os.path.dirname(self.journal_path), MARK_FILE))
        guilty_key = _key(guilty) if guilty else None
        for key, entry in self._inflight.items():
            # in flight when the process died: fetch again rather than lose it. A bystander
            # keeps its count; the page being worked on counts one more death, and at its last
            # allowed attempt it is quarantined (a poison page)
            if key != guilty_key:
                self._requeue(entry)
                requeued += 1
                continue
            attempts = self._attempts.get(key, 0) + 1
            if self.quarantine_after and attempts >= self.quarantine_after:
                fp, url, _ = _unpack(entry[3])
                self.quarantined.append(QuarantineRecord(url, fp.hex(), attempts, now))
                self._quarantine.add(key)
                self._attempts.pop(key, None)
                continue  # stays seen: a link found to it again is a duplicate
            self._attempts[key] = attempts
            self._requeue(entry)
            requeued += 1
        self._inflight.clear()
        self.redelivered = requeued
        # stale heap entries of popped keys are dropped lazily by pop()
        logger.info(
            "frontier resumed from %s: %d queued, %d seen, %d in-flight re-queued, %d bad lines",
            self.journal_path,
            len(self._queued),
            len(self._seen),
            requeued,
            bad,
        )

    def _requeue(self, entry: _Entry | None) -> None:
        if entry is not None:
            self._seen.discard(entry[2])
            fp, url, data = _unpack(entry[3])
            self._push(url, -entry[0], fp, data, False)

    def _rewrite_journal(self) -> None:
        """Compact the journal to the current state (queued entries and seen keys)."""
        assert self.journal_path is not None
        tmp = self.journal_path + ".tmp"
        try:
            with open(tmp, "wb") as fh:
                for key in self._seen:
                    fh.write(b'{"%s":%d}\n' % (b"q" if key in self._quarantine else b"s", key))
                for key, attempts in self._attempts.items():
                    fh.write(b'{"c":[%d,%d]}\n' % (key, attempts))
                for entry in self._queued.values():
                    fp, url, data = _unpack(entry[3])
                    rec = {"p": [url, -entry[0], fp.hex(), data, False]}
                    fh.write(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
                fh.flush()
                os.fsync(fh.fileno())  # the old journal goes only once the new one is whole
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # a full disk: the old journal stays, as it was
            raise
        os.replace(tmp, self.journal_path)
        self._journal = Journal(self.journal_path)
        self._journal.open()
