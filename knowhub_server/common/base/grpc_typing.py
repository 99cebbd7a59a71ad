"""Typed views of grpc objects whose type stubs leave out what the runtime has."""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias, cast

import grpc

# A method handler of any request and response types (interceptors see every method);
# quoted: grpc's class is generic in its stubs only.
MethodHandler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


def replaced(handler: MethodHandler, **fields: Any) -> MethodHandler:
    """`handler` with `fields` changed: grpc's handlers are namedtuples at runtime, which
    its stubs do not say."""
    return cast(MethodHandler, cast(Any, handler)._replace(**fields))


class Outcome(Protocol):
    """What a server context tells of a call's end (grpc has had both methods since 1.38;
    its stubs lack them)."""

    def code(self) -> grpc.StatusCode | None: ...

    def details(self) -> bytes | str | None: ...


def outcome(context: grpc.ServicerContext) -> Outcome:
    return cast(Outcome, context)
