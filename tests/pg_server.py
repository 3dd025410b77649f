"""A real PostgreSQL cluster of the tests' own: ``initdb`` in a fresh folder, ``postgres`` on a
free loopback port, ready when its log says so (no polling).

PostgreSQL refuses to run as root, so as root the cluster is made and run as ``nobody`` (through
``setpriv``; the folder is made in /tmp and given to that user); as anyone else, as that user.
Debian's binaries are found under /usr/lib/postgresql/*/bin (``FOCUSCRAWL_PG_BIN`` overrides);
``scripts/setup-system`` installs them when missing. ``fsync`` is off: the tests kill clients
and restart the server cleanly, they never crash the machine; ``durable=True`` (the bench) keeps
PostgreSQL's defaults (every COMMIT flushed to disk). :meth:`PostgresServer.cpu_seconds` is the
CPU the server used so far (all its processes, the exited ones too), read from /proc.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

USER, PASSWORD = "focuscrawl", "pg-test-secret-7f3e"  # the superuser of the test cluster
RUN_AS = "nobody"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pg_bin() -> Path | None:
    explicit = os.environ.get("FOCUSCRAWL_PG_BIN")
    if explicit:
        return Path(explicit)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _version(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


class PostgresServer:
    """One cluster; :meth:`start` again after :meth:`stop` restarts it on the same port."""

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable
        self.bin = pg_bin()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="focuscrawl-pg-"))
        self.data = self.root / "data"
        self.proc: subprocess.Popen[str] | None = None
        self.as_root = os.geteuid() == 0
        self.log: list[str] = []
        self._drainer: threading.Thread | None = None

    def url(self, db: str = "postgres", password: str | None = PASSWORD) -> str:
        auth = f"{USER}:{password}@" if password is not None else f"{USER}@"
        return f"postgresql://{auth}127.0.0.1:{self.port}/{db}"

    def _cmd(self, *args: str) -> list[str]:
        if not self.as_root:
            return list(args)
        entry = pwd.getpwnam(RUN_AS)
        return [
            "setpriv",
            f"--reuid={entry.pw_uid}",
            f"--regid={entry.pw_gid}",
            "--clear-groups",
            *args,
        ]

    def init(self) -> None:
        if self.bin is None or not (self.bin / "initdb").exists():
            raise RuntimeError(
                "PostgreSQL is not installed (scripts/setup-system installs it: "
                "apt-get install postgresql)"
            )
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_root:
            entry = pwd.getpwnam(RUN_AS)
            for p in (self.root, pwfile):
                os.chown(p, entry.pw_uid, entry.pw_gid)
        os.chmod(self.root, 0o700)
        done = subprocess.run(
            self._cmd(
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                USER,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}): {done.stderr[-2000:]}")

    def start(self) -> None:
        assert self.bin is not None
        self.proc = subprocess.Popen(
            self._cmd(
                str(self.bin / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
                *(() if self.durable else ("-c", "fsync=off", "-c", "full_page_writes=off")),
                "-c",
                "shared_buffers=64MB" if not self.durable else "shared_buffers=256MB",
                "-c",
                "max_connections=60",
                "-c",
                "logging_collector=off",
                "-c",
                "log_min_messages=warning",
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if "database system is ready to accept connections" in line:
                self._drainer = threading.Thread(target=self._drain, args=(self.proc,), daemon=True)
                self._drainer.start()
                return
        raise RuntimeError(f"postgres exited with {self.proc.wait()}: {''.join(self.log[-20:])}")

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.log.append(line)

    def cpu_seconds(self) -> float:
        """User + system CPU of the postmaster, its exited children (reaped: ``cutime``,
        ``cstime``) and its live ones (backends, WAL writer, checkpointer …), from /proc."""
        assert self.proc is not None
        tick = os.sysconf("SC_CLK_TCK")
        while True:  # a child reaped during the scan moves to cutime: read again
            main = _stat(self.proc.pid)
            if main is None:
                return 0.0
            total = sum(main[11:15])
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    fields = _stat(int(entry.name))
                    if fields and fields[1] == self.proc.pid:
                        total += fields[11] + fields[12]
            again = _stat(self.proc.pid)
            if again is None or again[11:15] == main[11:15]:
                return total / tick

    def stop(self, mode: signal.Signals = signal.SIGINT) -> None:
        """Shut down (SIGINT: PostgreSQL's fast shutdown; clients' connections are cut)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(mode)
            proc.wait(timeout=60)
        if self._drainer is not None:
            self._drainer.join(timeout=30)  # the log's end: the pipe is at EOF
            self._drainer = None
        if proc.stderr is not None:
            proc.stderr.close()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _stat(pid: int) -> list[int] | None:
    """/proc/<pid>/stat's fields after the command name, as numbers (0 for the state): field
    ``k`` of proc(5) is at ``k - 3``, so ppid is [1], utime [11] … cstime [14]."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None
    rest = raw[raw.rindex(")") + 2 :].split()
    return [int(x) if x.lstrip("-").isdigit() else 0 for x in rest]
