"""Channels and calls: `Transport` (blocking) and `AsyncTransport` (asyncio).

A service API builds a request and names its stub method and result parser; the
transport makes the call and turns gRPC errors into `knowhub.errors`. The two differ only
here: the service APIs are written once, as asyncio code (knowhub/_async), and the
blocking ones are generated from it (knowhub/_sync).
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Generic, Protocol, TypeVar

import grpc
import grpc.aio
from google.protobuf.message import Message

from knowhub.channels import TlsCA, open_aio_channel, open_channel
from knowhub.errors import from_rpc_error

T = TypeVar("T")
Request = TypeVar("Request", bound=Message)
Response = TypeVar("Response", bound=Message)
Answer = TypeVar("Answer", covariant=True)
Metadata = tuple[tuple[str, str], ...]
DEFAULT_TIMEOUT = 60.0


class Answers(Protocol[Answer]):
    """What a blocking server-streaming call returns: its answers, and a way to end it."""

    def __next__(self) -> Answer: ...

    def cancel(self) -> bool: ...


def _metadata(token: str | None) -> Metadata:
    return (("authorization", f"Bearer {token}"),) if token else ()


class Stream(Iterator[T]):
    """The answers of a server-streaming call, parsed. `cancel()` (from any thread, or
    leaving a `with` block) ends it: iteration then stops without an error."""

    def __init__(
        self,
        call: Answers[Response],
        parse: Callable[[Response], T],
        failure: Callable[[grpc.RpcError], Exception] = from_rpc_error,
    ) -> None:
        self._next: Callable[[], T] = lambda: parse(next(call))
        self._failure = failure
        self._cancel = call.cancel
        self._cancelled = False

    def __next__(self) -> T:
        try:
            return self._next()
        except grpc.RpcError as error:
            if self._cancelled:
                raise StopIteration from None
            raise self._failure(error) from None

    def cancel(self) -> None:
        self._cancelled = True
        self._cancel()

    def __enter__(self) -> Stream[T]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.cancel()


class AsyncStream(AsyncIterator[T], Generic[T]):
    """The asyncio counterpart of Stream."""

    def __init__(
        self,
        call: grpc.aio.UnaryStreamCall[Request, Response],
        parse: Callable[[Response], T],
        failure: Callable[[grpc.RpcError], Exception] = from_rpc_error,
    ) -> None:
        self._failure = failure

        async def read() -> T:
            response = await call.read()
            if response is grpc.aio.EOF:
                raise StopAsyncIteration
            return parse(typing.cast(Response, response))

        self._read = read
        self._cancel = call.cancel
        self._cancelled = False

    async def __anext__(self) -> T:
        try:
            return await self._read()
        except grpc.RpcError as error:
            if self._cancelled:
                raise StopAsyncIteration from None
            raise self._failure(error) from None

    def cancel(self) -> None:
        self._cancelled = True
        self._cancel()

    async def __aenter__(self) -> AsyncStream[T]:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.cancel()


class Transport:
    """Blocking calls over one channel."""

    def __init__(
        self,
        target: str,
        token: str | None,
        timeout: float,
        tls: bool = False,
        tls_ca: TlsCA | None = None,
    ) -> None:
        self.channel = open_channel(target, tls=tls, tls_ca=tls_ca)
        self._metadata = _metadata(token)
        self.timeout = timeout
        self._target, self._tls = target, tls or tls_ca is not None

    def _failure(self, error: grpc.RpcError) -> Exception:
        return from_rpc_error(error, self._target, self._tls)

    def call(
        self,
        method: grpc.UnaryUnaryMultiCallable[Request, Response],
        request: Request,
        parse: Callable[[Response], T],
        timeout: float | None = None,
    ) -> T:
        try:
            response = method(request, metadata=self._metadata, timeout=timeout or self.timeout)
        except grpc.RpcError as error:
            raise self._failure(error) from None
        return parse(response)

    def stream(
        self,
        method: grpc.UnaryStreamMultiCallable[Request, Response],
        request: Request,
        parse: Callable[[Response], T],
    ) -> Stream[T]:
        """A server-streaming call, without deadline, until it is cancelled."""
        return Stream(method(request, metadata=self._metadata), parse, self._failure)

    def close(self) -> None:
        self.channel.close()


class AsyncTransport:
    """Awaitable calls over one asyncio channel."""

    def __init__(
        self,
        target: str,
        token: str | None,
        timeout: float,
        tls: bool = False,
        tls_ca: TlsCA | None = None,
    ) -> None:
        self.channel = open_aio_channel(target, tls=tls, tls_ca=tls_ca)
        self._metadata = _metadata(token)
        self.timeout = timeout
        self._target, self._tls = target, tls or tls_ca is not None

    def _failure(self, error: grpc.RpcError) -> Exception:
        return from_rpc_error(error, self._target, self._tls)

    async def call(
        self,
        method: grpc.aio.UnaryUnaryMultiCallable[Request, Response],
        request: Request,
        parse: Callable[[Response], T],
        timeout: float | None = None,
    ) -> T:
        try:
            response = await method(
                request, metadata=self._metadata, timeout=timeout or self.timeout
            )
        except grpc.RpcError as error:
            raise self._failure(error) from None
        return parse(response)

    def stream(
        self,
        method: grpc.aio.UnaryStreamMultiCallable[Request, Response],
        request: Request,
        parse: Callable[[Response], T],
    ) -> AsyncStream[T]:
        """A server-streaming call, without deadline, until it is cancelled."""
        return AsyncStream(method(request, metadata=self._metadata), parse, self._failure)

    async def close(self) -> None:
        await self.channel.close()
