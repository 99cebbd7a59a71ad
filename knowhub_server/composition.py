"""What a KnowHub server is made of: the services the command line runs, each with the
function that adds it to a server, and which of them leave the main process of
`knowhub up --processes N`. The command line passes the services down to the server
runtime (knowhub_server.common.runtime.server), which names none of its own.

The names are light (`knowhub --help` lists them); `services()` imports every service,
which only a command that starts a server does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowhub_server.common.runtime.admin import SubjectForget
    from knowhub_server.common.runtime.server import HostedService

SERVICE_NAMES = ("knowledge", "resource", "cognition", "dream")
GATEWAY = "gateway"
# The order services leave the main process in, as more processes are asked for. The
# services that keep records in Qdrant (knowledge, resource, dream) stay in the main
# process: the embedded engine admits one process per collection, and a backup is written
# by the process that holds the collections and the master key file, so all of them must
# be in the one it reaches. The gateway and the Redis-backed cognition service can leave.
SPLIT_ORDER = (GATEWAY, "cognition")


def services(names: Iterable[str] = SERVICE_NAMES) -> list[HostedService]:
    """The services `names` names, in that order; ValueError for a name that is none."""
    from knowhub_server.cognition import registration as cognition
    from knowhub_server.common.runtime.server import HostedService
    from knowhub_server.dream import registration as dream
    from knowhub_server.knowledge import registration as knowledge
    from knowhub_server.resource import registration as resource

    registrations = {
        "knowledge": (knowledge.SERVICE_NAME, knowledge.register, knowledge.FORGET),
        "resource": (resource.SERVICE_NAME, resource.register, resource.FORGET),
        "cognition": (cognition.SERVICE_NAME, cognition.register, cognition.FORGET),
        "dream": (dream.SERVICE_NAME, dream.register, dream.FORGET),
    }
    chosen = []
    for name in names:
        if name not in registrations:
            raise ValueError(f"unknown service {name!r}; choose from {', '.join(SERVICE_NAMES)}")
        chosen.append(HostedService(name, *registrations[name]))
    return chosen


def subject_forgets() -> list[SubjectForget]:
    """Every service's part of the admin's ForgetSubject, in the order it calls them: each
    server's admin service forgets a subject in all of them, wherever they run."""
    return [service.forget for service in services()]


def split(processes: int, *, gateway: bool) -> list[str]:
    """What leaves the main process when `processes` processes are asked for: the gateway
    first (when there is one), then cognition."""
    order = SPLIT_ORDER if gateway else SPLIT_ORDER[1:]
    if processes > len(order) + 1:
        raise ValueError(
            f"--processes {processes}: at most {len(order) + 1} (the main "
            f"process with the services that keep records in Qdrant, then "
            f"{', '.join(order)})"
        )
    return list(order[: processes - 1])
