"""Free loopback ports for servers the tests start in other processes.

A port is chosen at random below the kernel's ephemeral range: outgoing connections and
servers bound to port 0 (the hubs of other test workers) take ports from that range at
any moment, so a port found free there can be taken before the server started on it binds
it.
"""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

LOWEST = 1024


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range."""
    with contextlib.suppress(OSError, ValueError):
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        return int(text.split()[0])
    return 32768


def free_port(ceiling: int | None = None) -> int:
    """A free loopback port below the ephemeral range (and below `ceiling` if given)."""
    top = min(ephemeral_low(), ceiling or ephemeral_low())
    while True:
        port = random.randrange(LOWEST, max(top, LOWEST + 1))
        if port_is_free(port):
            return port
