"""Real KnowHub servers on loopback port 0 over stores in a temporary directory."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from knowhub import KnowHub
from knowhub.local import read_local_token

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.server import KnowHubServer
from knowhub_server.composition import SERVICE_NAMES, services, subject_forgets

# Principals of the tests' tokens file: two organisations, roles, projects and teams.
# alice and bob may publish into `public`; carol may not.
PRINCIPALS: dict[str, dict[str, Any]] = {
    "alice": {
        "user_id": "alice",
        "agent_id": "alice_bot",
        "org_id": "acme",
        "project_ids": ["p1"],
        "team_ids": ["t1"],
        "roles": ["publisher"],
    },
    # No agent by default; may act as either agent by naming it.
    "carol": {
        "user_id": "carol",
        "org_id": "acme",
        "team_ids": ["t1"],
        "agent_ids": ["carol_bot", "carols_helper"],
    },
    "bob": {"user_id": "bob", "agent_id": "bob_bot", "org_id": "globex", "roles": ["publisher"]},
    "admin": {"user_id": "root", "org_id": "acme", "roles": ["admin"]},
}


def write_tokens_file(
    directory: Path, principals: Mapping[str, Mapping[str, Any]] = PRINCIPALS
) -> Path:
    """A tokens file giving each principal the token `token-<name>`."""
    path = directory / "tokens.json"
    entries = [{"token": f"token-{name}", **fields} for name, fields in principals.items()]
    path.write_text(json.dumps({"tokens": entries}))
    return path


class Harness:
    """Starts, stops and restarts one in-process server on a fixed data directory."""

    def __init__(
        self, data_dir: Path, *, services: list[str] | None = None, **settings: Any
    ) -> None:
        self.data_dir = data_dir
        self.services = services or list(SERVICE_NAMES)
        self.settings = settings
        self.server: KnowHubServer | None = None
        self._clients: list[KnowHub] = []

    @property
    def address(self) -> str:
        assert self.server is not None, "server not started"
        return f"127.0.0.1:{self.server.port}"

    def start(self) -> Harness:
        settings = CommonSettings(data_dir=self.data_dir, host="127.0.0.1", port=0, **self.settings)
        self.server = KnowHubServer(
            Runtime.open(settings), services(self.services), forgets=subject_forgets()
        )
        self.server.start()
        return self

    def stop(self) -> None:
        for client in self._clients:
            client.close()
        self._clients.clear()
        if self.server is not None:
            self.server.stop(grace=1.0)
            self.server = None

    def restart(self) -> Harness:
        self.stop()
        return self.start()

    @property
    def local_token(self) -> str:
        """The token of a server without a tokens file."""
        token = read_local_token(self.data_dir)
        assert token, f"no local token in {self.data_dir}"
        return token

    def client(self, principal: str | None = None) -> KnowHub:
        """A client with `principal`'s token (the local token when the server has no
        tokens file)."""
        token = f"token-{principal}" if principal else self.local_token
        client = KnowHub(self.address, token=token, timeout=30)
        self._clients.append(client)
        return client
