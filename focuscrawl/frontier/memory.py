"""The in-process frontier: per-host heaps under a heap of hosts, optionally journaled to disk.

Memory per queued URL is one tuple and one ``bytes`` payload (fingerprint + URL + JSON data);
de-duplication keys are the first 8 bytes of the request fingerprint as an ``int``. A URL found
again with a better score gets a new heap entry and the old one goes stale (lazy deletion).

With a journal path (under ``JOBDIR``), every push, pop and ack is appended with ``os.write``
(it reaches the kernel before the call returns, so a SIGKILL loses nothing written); opening
replays it and entries popped but never acked (in flight at the kill) are queued again.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import os
from typing import Any

from focuscrawl.frontier.base import FrontierEntry, HostBusy, PushResult, host_of, never_busy

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
    def __init__(self, journal_path: str | None = None) -> None:
        self.journal_path = journal_path
        self._seq = itertools.count()
        self._queued: dict[int, _Entry] = {}
        self._seen: set[int] = set()  # popped keys
        self._inflight: dict[int, _Entry] = {}  # popped, not acked (journaled runs only)
        self._hosts: dict[str, list[_Entry]] = {}
        self._host_heap: list[tuple[float, int, str]] = []
        self._host_top: dict[str, tuple[float, int]] = {}
        self._fd: int | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def open(self) -> None:
        if not self.journal_path:
            return
        if os.path.exists(self.journal_path):
            self._replay()
        self._rewrite_journal()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # -- queue operations -----------------------------------------------------------------
    def push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool = False
    ) -> PushResult:
        result = self._push(url, score, fingerprint, data, force)
        if self._fd is not None and result in (PushResult.ADDED, PushResult.UPGRADED):
            self._log({"p": [url, score, fingerprint.hex(), data, force]})
        return result

    def _push(
        self, url: str, score: float, fingerprint: bytes, data: dict[str, Any], force: bool
    ) -> PushResult:
        key = _key(fingerprint)
        old = self._queued.get(key)
        if old is not None:
            if -old[0] >= score:
                return PushResult.QUEUED
            result = PushResult.UPGRADED
        elif key in self._seen and not force:
            return PushResult.SEEN
        else:
            result = PushResult.ADDED
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
        while self._host_heap:
            item = heapq.heappop(self._host_heap)
            neg, seq, host = item
            if self._host_top.get(host) != (neg, seq):
                continue  # stale: a better entry of this host was pushed since
            if busy(host):
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
        if self._fd is not None:
            self._inflight[found[2]] = found
            self._log({"x": fingerprint.hex()})
        return FrontierEntry(url=url, score=-found[0], fingerprint=fingerprint, data=data)

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
        if self._fd is not None and self._inflight.pop(_key(fingerprint), None) is not None:
            self._log({"a": fingerprint.hex()})

    def seen(self, fingerprint: bytes) -> bool:
        key = _key(fingerprint)
        return key in self._seen or key in self._queued

    def __len__(self) -> int:
        return len(self._queued)

    # -- journal --------------------------------------------------------------------------
    def _log(self, record: dict[str, Any]) -> None:
        assert self._fd is not None
        os.write(self._fd, json.dumps(record, separators=(",", ":")).encode() + b"\n")

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
                    self._inflight.pop(_key(bytes.fromhex(record["a"])), None)
        requeued = 0
        for key, entry in self._inflight.items():
            # in flight when the process died: fetch again rather than lose it
            self._seen.discard(key)
            fp, url, data = _unpack(entry[3])
            self._push(url, -entry[0], fp, data, False)
            requeued += 1
        self._inflight.clear()
        # stale heap entries of popped keys are dropped lazily by pop()
        logger.info(
            "frontier resumed from %s: %d queued, %d seen, %d in-flight re-queued, %d bad lines",
            self.journal_path,
            len(self._queued),
            len(self._seen),
            requeued,
            bad,
        )

    def _rewrite_journal(self) -> None:
        """Compact the journal to the current state (queued entries and seen keys)."""
        assert self.journal_path is not None
        tmp = self.journal_path + ".tmp"
        with open(tmp, "wb") as fh:
            for key in self._seen:
                fh.write(b'{"s":%d}\n' % key)
            for entry in self._queued.values():
                fp, url, data = _unpack(entry[3])
                rec = {"p": [url, -entry[0], fp.hex(), data, False]}
                fh.write(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
        os.replace(tmp, self.journal_path)
        self._fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND)
