"""The hub's client: one object per hub, one attribute per service.

`KnowHub` blocks; `AsyncKnowHub` is its asyncio twin (each method a coroutine, used in
`async with`). Pass `knowledge="host:port"` (or `resource=...`, `cognition=...`,
`dream=...`) to reach a service at its own address (compose), or a `dns:///name:port`
target to spread calls over every replica behind a name (round-robin). `tls_ca` (PEM
bytes or a file's path) verifies a TLS server with that CA; `tls=True` alone uses the
system's root certificates.

Without `target`, the client calls `KNOWHUB_TARGET`, else 127.0.0.1:50051. Without `token`,
the client sends `KNOWHUB_TOKEN`, else, for a hub on this machine, the
local token of its data directory (see knowhub.local); `token=""` sends none.
"""

from __future__ import annotations

from types import TracebackType

from knowhub._async.admin import AsyncAdminAPI
from knowhub._async.cognition import AsyncCognitionAPI
from knowhub._async.dream import AsyncDreamAPI
from knowhub._async.knowledge import AsyncKnowledgeAPI
from knowhub._async.memory import AsyncMemoryAPI
from knowhub._async.resources import AsyncResourcesAPI
from knowhub._transport import DEFAULT_TIMEOUT, AsyncTransport
from knowhub.channels import TlsCA, default_target, read_ca
from knowhub.local import default_token


class AsyncKnowHub:
    """A KnowHub client, e.g. `kh.knowledge.search("how to log in with selenium")`."""

    def __init__(
        self,
        target: str | None = None,
        *,
        token: str | None = None,
        knowledge: str | None = None,
        resource: str | None = None,
        cognition: str | None = None,
        dream: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        tls: bool = False,
        tls_ca: TlsCA | None = None,
    ) -> None:
        """Connects to the hub (the channels open on the first call).

        Args:
            target: The hub's `host:port`, or a `dns:///name:port` target to spread calls
                over every replica behind a name; `KNOWHUB_TARGET`, else 127.0.0.1:50051,
                by default.
            token: The bearer token; `KNOWHUB_TOKEN`, else a local hub's token from its
                data directory, by default; "" sends none.
            knowledge: The knowledge service's own address, when it runs apart (compose).
            resource: The resource service's own address.
            cognition: The cognition service's own address.
            dream: The dream service's own address (memory and dream runs).
            timeout: Seconds each call may take.
            tls: Speak TLS, verifying the hub with the system's root certificates.
            tls_ca: Speak TLS, verifying the hub with this CA (PEM bytes or a file's path).
        """
        self._transports: dict[str, AsyncTransport] = {}
        ca = read_ca(tls_ca)  # read once, for every channel
        target = target or default_target()
        if token is None:
            own = (knowledge, resource, cognition, dream)
            token = default_token({t or target for t in own})

        def transport(own_target: str | None) -> AsyncTransport:
            """One channel per distinct address."""
            address = own_target or target
            if address not in self._transports:
                self._transports[address] = AsyncTransport(address, token, timeout, tls, ca)
            return self._transports[address]

        self.knowledge = AsyncKnowledgeAPI(transport(knowledge))
        self.resources = AsyncResourcesAPI(transport(resource))
        self.cognition = AsyncCognitionAPI(transport(cognition), self.knowledge)
        self.memory = AsyncMemoryAPI(transport(dream))
        self.dream = AsyncDreamAPI(transport(dream))
        self.admin = AsyncAdminAPI(transport(None))

    async def close(self) -> None:
        """Closes the client's channels (`with KnowHub() as kh:` closes them at the
        end of the block).
        """
        for transport in self._transports.values():
            await transport.close()

    async def __aenter__(self) -> AsyncKnowHub:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()
