"""Channels and calls, shared by the blocking and the asyncio clients.

A service API builds a request and names its stub method and result parser; the
transport makes the call (blocking or awaitable) and turns gRPC errors into
`knowhub.errors`. So every API method is written once for both clients.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import grpc
import grpc.aio

from knowhub.channels import TlsCA, open_aio_channel, open_channel
from knowhub.errors import from_rpc_error

T = TypeVar("T")
Parse = Callable[[Any], T]


def _metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


class Stream(Iterator[T]):
    """The answers of a server-streaming call, parsed. `cancel()` (from any thread, or
    leaving a `with` block) ends it: iteration then stops without an error."""

    def __init__(self, call: Any, parse: Parse[T]) -> None:
        self._call, self._parse, self._cancelled = call, parse, False

    def __next__(self) -> T:
        try:
            return self._parse(next(self._call))
        except grpc.RpcError as error:
            if self._cancelled:
                raise StopIteration from None
            raise from_rpc_error(error) from None

    def cancel(self) -> None:
        self._cancelled = True
        self._call.cancel()

    def __enter__(self) -> Stream[T]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.cancel()


class AsyncStream(AsyncIterator[T]):
    """The asyncio counterpart of Stream."""

    def __init__(self, call: Any, parse: Parse[T]) -> None:
        self._call, self._parse, self._cancelled = call, parse, False

    async def __anext__(self) -> T:
        try:
            response = await self._call.read()
        except grpc.RpcError as error:
            if self._cancelled:
                raise StopAsyncIteration from None
            raise from_rpc_error(error) from None
        if response is grpc.aio.EOF:
            raise StopAsyncIteration
        return self._parse(response)

    def cancel(self) -> None:
        self._cancelled = True
        self._call.cancel()

    async def __aenter__(self) -> AsyncStream[T]:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.cancel()


class Transport:
    """Blocking calls over one channel."""

    def __init__(self, target: str, token: str | None, timeout: float,
                 tls: bool = False, tls_ca: TlsCA | None = None) -> None:
        self.channel = open_channel(target, tls=tls, tls_ca=tls_ca)
        self._metadata = _metadata(token)
        self.timeout = timeout

    def call(self, method: Callable[..., Any], request: Any, parse: Parse[T],
             timeout: float | None = None) -> T:
        try:
            response = method(request, metadata=self._metadata,
                              timeout=timeout or self.timeout)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return parse(response)

    def stream(self, method: Callable[..., Any], request: Any, parse: Parse[T]) -> Stream[T]:
        """A server-streaming call, without deadline, until it is cancelled."""
        return Stream(method(request, metadata=self._metadata), parse)

    def close(self) -> None:
        self.channel.close()


class AsyncTransport:
    """Awaitable calls over one asyncio channel."""

    def __init__(self, target: str, token: str | None, timeout: float,
                 tls: bool = False, tls_ca: TlsCA | None = None) -> None:
        self.channel = open_aio_channel(target, tls=tls, tls_ca=tls_ca)
        self._metadata = _metadata(token)
        self.timeout = timeout

    def call(self, method: Callable[..., Any], request: Any, parse: Parse[T],
             timeout: float | None = None) -> Awaitable[T]:
        async def run() -> T:
            try:
                response = await method(request, metadata=self._metadata,
                                        timeout=timeout or self.timeout)
            except grpc.RpcError as error:
                raise from_rpc_error(error) from None
            return parse(response)

        return run()

    def stream(self, method: Callable[..., Any], request: Any,
               parse: Parse[T]) -> AsyncStream[T]:
        """A server-streaming call, without deadline, until it is cancelled."""
        return AsyncStream(method(request, metadata=self._metadata), parse)

    async def close(self) -> None:
        await self.channel.close()
