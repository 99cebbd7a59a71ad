"""Helpers for tests that share one server per module and check what a call changed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
from knowhub import KnowHub, errors
from knowhub_contracts.v1 import knowledge_pb2_grpc

from tests.support.harness import Harness, write_tokens_file


@contextlib.contextmanager
def running_hub(
    directory: Path, *, tokens: bool | Path = True, **settings: Any
) -> Iterator[Harness]:
    """A server over a data directory under `directory`, with the tests' tokens (True),
    another tokens file, or none (False: open access on loopback)."""
    directory.mkdir(parents=True, exist_ok=True)
    if tokens is True:
        settings["tokens_file"] = write_tokens_file(directory)
    elif tokens:
        settings["tokens_file"] = tokens
    harness = Harness(directory / "data", **settings).start()
    try:
        yield harness
    finally:
        harness.stop()


def every_item(fetch: Callable[[str], Any]) -> list[Any]:
    """The items of every page: `fetch(page_token)` returns a page (a list of items with
    `next_page_token`), called until a page has no next token."""
    items: list[Any] = []
    token = ""
    while True:
        page = fetch(token)
        items += page
        token = page.next_page_token
        if not token:
            return items


def visible_records(client: KnowHub) -> dict[str, dict[str, Any]]:
    """Every record the client's caller can see, by id, in full."""
    records = every_item(lambda token: client.knowledge.list(limit=100, page_token=token))
    return {k.id: k.to_dict() for k in records}


def bearer(principal: str | None) -> tuple[tuple[str, str], ...]:
    """gRPC metadata with `principal`'s token from the tests' tokens file."""
    return (("authorization", f"Bearer token-{principal}"),) if principal else ()


@contextlib.contextmanager
def raw_knowledge(harness: Harness) -> Iterator[knowledge_pb2_grpc.KnowledgeServiceStub]:
    """The generated stub, for inputs the SDK cannot express."""
    channel = grpc.insecure_channel(harness.address)
    try:
        yield knowledge_pb2_grpc.KnowledgeServiceStub(channel)
    finally:
        channel.close()


def failure(call: Callable[[], object]) -> tuple[str, str]:
    """The status code name and message a call failed with (SDK or raw stub)."""
    try:
        call()
    except errors.KnowHubError as error:
        return error.code, error.message
    except grpc.RpcError as error:
        return error.code().name, error.details() or ""
    raise AssertionError("the call succeeded but should have failed")
