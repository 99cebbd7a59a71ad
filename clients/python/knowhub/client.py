"""`KnowHub` (blocking) and `AsyncKnowHub` (asyncio): one object per hub, one attribute
per service."""

from __future__ import annotations

from types import TracebackType

from knowhub._transport import AsyncTransport, Transport
from knowhub.channels import TlsCA, read_ca
from knowhub.cognition import CognitionAPI
from knowhub.dream import DreamAPI
from knowhub.knowledge import KnowledgeAPI
from knowhub.memory import MemoryAPI
from knowhub.resources import ResourcesAPI

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 60.0


class _Hub:
    """Opens one channel per distinct address and gives each service its API."""

    _transport_class: type[Transport] | type[AsyncTransport]

    def __init__(self, target: str | None = None, *, token: str | None = None,
                 knowledge: str | None = None, resource: str | None = None,
                 cognition: str | None = None, dream: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT,
                 tls: bool = False, tls_ca: TlsCA | None = None) -> None:
        self._transports: dict[str, Transport | AsyncTransport] = {}
        ca = read_ca(tls_ca)  # read once, for every channel

        def transport(own_target: str | None) -> Transport | AsyncTransport:
            address = own_target or target or DEFAULT_TARGET
            if address not in self._transports:
                self._transports[address] = self._transport_class(
                    address, token, timeout, tls, ca)
            return self._transports[address]

        self.knowledge = KnowledgeAPI(transport(knowledge))
        self.resources = ResourcesAPI(transport(resource))
        self.cognition = CognitionAPI(transport(cognition), self.knowledge)
        self.memory = MemoryAPI(transport(dream))
        self.dream = DreamAPI(transport(dream))


class KnowHub(_Hub):
    """Blocking client.

    >>> kh = KnowHub("127.0.0.1:50051", token=None)
    >>> kh.knowledge.search("how to log in with selenium")

    Pass `knowledge="host:port"` (or `resource=...`, `cognition=...`, `dream=...`) to
    reach a service at its own address (compose), or a `dns:///name:port` target to
    spread calls over every replica behind a name (round-robin). `tls_ca` (PEM bytes or
    a file's path) verifies a TLS server with that CA; `tls=True` alone uses the system's
    root certificates.
    """

    _transport_class = Transport

    def close(self) -> None:
        for transport in self._transports.values():
            transport.close()

    def __enter__(self) -> KnowHub:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


class AsyncKnowHub(_Hub):
    """asyncio client: the same methods as `KnowHub`, each awaitable.

    >>> async with AsyncKnowHub("127.0.0.1:50051") as kh:
    ...     hits = await kh.knowledge.search("how to log in with selenium")
    """

    _transport_class = AsyncTransport

    async def close(self) -> None:
        for transport in self._transports.values():
            await transport.close()

    async def __aenter__(self) -> AsyncKnowHub:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.close()
