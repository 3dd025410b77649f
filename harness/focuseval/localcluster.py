"""A real Redis Cluster on loopback ports, for tests, benches and trying cluster mode locally.

``LocalCluster(workdir, masters=3).start()`` runs one ``redis-server --cluster-enabled yes`` per
node on free loopback ports (no RDB, no AOF unless asked), joins them with
``redis-cli --cluster create … --cluster-yes`` and waits until every node answers
``cluster_state:ok`` (a bounded loop on ``CLUSTER INFO``, no sleep). ``python -m
focuseval.localcluster`` starts one and prints its URL (Ctrl-C stops it).
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

READY = "Ready to accept connections"


BUS_OFFSET = 10000  # a cluster node also listens on its port + 10000 (the cluster bus)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port(taken: frozenset[int] = frozenset()) -> int:
    """A loopback port that is free, and whose cluster bus port (+10000) is free too."""
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(20000, 65536 - BUS_OFFSET)
        if {port, port + BUS_OFFSET} & taken:
            continue
        if _bindable(port) and _bindable(port + BUS_OFFSET):
            return port
    raise RuntimeError("no free loopback port pair for a cluster node")


def _exe(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        raise RuntimeError(f"{name} is not installed (apt-get install redis-server)")
    return exe


class LocalCluster:
    """``masters`` masters (each with ``replicas`` replicas) on free loopback ports."""

    def __init__(
        self,
        workdir: Path,
        masters: int = 3,
        replicas: int = 0,
        appendonly: bool = False,
        node_timeout_ms: int = 2000,
        ports: list[int] | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.masters = masters
        self.replicas = replicas
        self.appendonly = appendonly
        self.node_timeout_ms = node_timeout_ms
        self.ports = ports or []
        self.procs: dict[int, subprocess.Popen[str]] = {}

    @property
    def url(self) -> str:
        """A URL naming one node: a cluster client finds the others from it."""
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self) -> LocalCluster:
        count = self.masters * (1 + self.replicas)
        if not self.ports:
            for _ in range(count):
                taken = frozenset(self.ports) | {p + BUS_OFFSET for p in self.ports}
                self.ports.append(free_port(taken))
        for port in self.ports:
            self.start_node(port)
        if count == 1:  # redis-cli --cluster create wants 3 masters: one node takes every slot
            import redis

            node = redis.Redis(host="127.0.0.1", port=self.ports[0])
            node.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
            node.close()
            self.wait_ok()
            return self
        subprocess.run(
            [
                _exe("redis-cli"),
                "--cluster",
                "create",
                *(f"127.0.0.1:{p}" for p in self.ports),
                "--cluster-replicas",
                str(self.replicas),
                "--cluster-yes",
            ],
            check=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
        self.wait_ok()
        return self

    def start_node(self, port: int) -> None:
        """Start (or restart, with its cluster config file) the node on ``port``."""
        node_dir = self.workdir / str(port)
        node_dir.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            [
                _exe("redis-server"),
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                str(self.node_timeout_ms),
                "--save",
                "",
                "--appendonly",
                "yes" if self.appendonly else "no",
                "--repl-diskless-sync-delay",  # a replica's first sync at once, not after 5 s
                "0",
                "--dir",
                str(node_dir),
                "--logfile",
                "",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            if READY in line:
                # keep draining its log so that a full pipe never blocks the server
                threading.Thread(target=proc.stdout.read, daemon=True).start()
                self.procs[port] = proc
                return
        raise RuntimeError(f"redis-server on port {port} exited with {proc.wait()}")

    def wait_ok(self, attempts: int = 3000) -> None:
        """Until every running node says ``cluster_state:ok`` and knows all masters' slots, and
        every replica's link to its master is up (bounded: ``CLUSTER INFO`` asked at most
        ``attempts`` times per node, 10 ms apart)."""
        import redis

        pause = threading.Event()
        for port in self.procs:
            client = redis.Redis(port=port, host="127.0.0.1", socket_timeout=5)
            try:
                for _ in range(attempts):
                    info = client.execute_command("CLUSTER", "INFO")
                    text = info.decode() if isinstance(info, bytes) else str(info)
                    synced = client.info("replication").get("master_link_status") in (None, "up")
                    if "cluster_state:ok" in text and "cluster_slots_ok:16384" in text and synced:
                        break
                    pause.wait(0.01)
                else:
                    raise RuntimeError(f"cluster node {port} never reached cluster_state:ok")
            finally:
                client.close()

    def node_ids(self) -> dict[int, str]:
        """Port → node id of every running node."""
        import redis

        out = {}
        for port in self.procs:
            node = redis.Redis(host="127.0.0.1", port=port)
            out[port] = node.execute_command("CLUSTER", "MYID").decode()
            node.close()
        return out

    def move_slot(
        self,
        slot: int,
        src: int,
        dst: int,
        keys_per_call: int = 10,
        between: Callable[[], None] | None = None,
    ) -> int:
        """Move ``slot`` from the master on port ``src`` to the one on ``dst``, live, as
        ``redis-cli --cluster reshard`` does (``SETSLOT IMPORTING``/``MIGRATING``, ``MIGRATE``
        of its keys ``keys_per_call`` at a time, ``SETSLOT NODE`` on both); ``between()`` runs
        after each ``MIGRATE`` (clients' calls mid-migration). The keys moved."""
        import redis

        ids = self.node_ids()
        a = redis.Redis(host="127.0.0.1", port=src)
        b = redis.Redis(host="127.0.0.1", port=dst)
        moved = 0
        try:
            b.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
            a.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])
            while keys := a.execute_command("CLUSTER", "GETKEYSINSLOT", slot, keys_per_call):
                a.execute_command("MIGRATE", "127.0.0.1", dst, "", 0, 5000, "KEYS", *keys)
                moved += len(keys)
                if between is not None:
                    between()
            for port in (dst, src):  # the new owner first, as redis-cli does
                node = redis.Redis(host="127.0.0.1", port=port)
                node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
                node.close()
        finally:
            a.close()
            b.close()
        return moved

    def kill(self, port: int) -> None:
        """SIGKILL one node (a master's failure)."""
        proc = self.procs.pop(port)
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()

    def stop(self) -> None:
        for port in list(self.procs):
            proc = self.procs.pop(port)
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
            if proc.stdout is not None:
                proc.stdout.close()


def main() -> None:  # pragma: no cover - an interactive helper
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="Start a local Redis Cluster on loopback.")
    parser.add_argument("--masters", type=int, default=3)
    parser.add_argument("--replicas", type=int, default=0)
    parser.add_argument("--port", type=int, default=0, help="first port (default: free ports)")
    parser.add_argument("--dir", default="", help="data directory (default: a temporary one)")
    parser.add_argument("--appendonly", action="store_true")
    args = parser.parse_args()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="focuscrawl-cluster-"))
    count = args.masters * (1 + args.replicas)
    ports = [args.port + i for i in range(count)] if args.port else None
    cluster = LocalCluster(workdir, args.masters, args.replicas, args.appendonly, ports=ports)
    cluster.start()
    print(f"Redis Cluster up: {cluster.url} (nodes {cluster.ports}, data in {workdir})")
    print(f"crawl on it with -s REDIS_URL={cluster.url} -s FOCUSCRAWL_REDIS_CLUSTER=True")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
