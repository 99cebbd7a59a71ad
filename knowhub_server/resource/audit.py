"""The audit trail: one Redis stream, `<redis_prefix>audit`, appended before answering.

A record says who did what to which resource version, and how it ended; it never holds
a secret value. `record` must succeed (UNAVAILABLE otherwise, so the caller does not act
or answer); `note` is for outcomes written after the fact, where a lost record is logged.

A record is written by a script (lua/append_before.lua) that appends it only before a
deadline, by the Redis server's clock: a Redis that froze and resumes late runs the
waiting append after the caller was already refused, and must not then record a read that
never happened.

With KNOWHUB_REDIS_WAIT_REPLICAS set, a record is acknowledged only once that many replicas
hold it (WAIT), so a failover of the master cannot lose it; the stream is one key, so it
needs no hash tag on a Redis Cluster.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

import redis
from redis.commands.core import Script

from knowhub_server.common.base.errors import InvalidArgument, Unavailable
from knowhub_server.common.base.times import now
from knowhub_server.common.security.auth import Principal
from knowhub_server.common.storage.redis_store import (
    COMMAND_TIMEOUT_SECONDS,
    NO_WAIT,
    NotReplicated,
    ReplicaWait,
    lua_source,
    stream_entries,
    write_acknowledged,
)

log = logging.getLogger(__name__)

STREAM = "audit"
_STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}")
_FILTERED_CHUNK = 256  # entries read per round when a filter drops some
_SCAN_MAX = 10_000  # entries one filtered page reads at most before it returns
LUA = "knowhub_server.resource"  # the package whose lua/<name>.lua holds each script


@dataclass
class AuditEvent:
    action: str  # save, read_secure, delete, undelete, destroy, forget, rotate_key
    resource_id: str
    version: int
    outcome: str  # attempt, ok, denied, failed: <CODE>
    actor: str = ""
    agent_id: str = ""
    detail: str = ""
    time: float = 0.0
    id: str = ""  # the stream entry id, once written


@dataclass(frozen=True)
class AppendCall:
    """One call of lua/append_before.lua, its KEYS and ARGV by name."""

    stream: str
    deadline_ms: int  # by the Redis server's clock
    fields: dict[str, str]

    def keys(self) -> list[str]:
        return [self.stream]

    def args(self) -> list[int | str]:
        return [self.deadline_ms, *(part for pair in self.fields.items() for part in pair)]


class AuditLog:
    def __init__(
        self, connect: Callable[[], redis.Redis], prefix: str, wait: ReplicaWait = NO_WAIT
    ) -> None:
        self._connect = connect  # the runtime's Redis, started on first use
        self.stream = f"{prefix}{STREAM}"
        self._wait = wait
        self._append: Script | None = None  # registered on the first record

    def record(self, principal: Principal, event: AuditEvent, *, unless: str) -> None:
        """Appends the event, or raises UNAVAILABLE saying what was therefore not done."""
        at = now()
        fields = {
            "time": repr(at),
            "actor": principal.user_scope,
            "agent_id": principal.acting_agent(""),
            "action": event.action,
            "resource_id": event.resource_id,
            "version": str(event.version),
            "outcome": event.outcome,
            "detail": event.detail,
        }
        # Half the command timeout: an append made in time is answered before the client
        # gives up on it.
        call = AppendCall(
            stream=self.stream,
            deadline_ms=int((at + COMMAND_TIMEOUT_SECONDS / 2) * 1000),
            fields=fields,
        )
        try:
            client = self._connect()
            if self._append is None:
                self._append = client.register_script(lua_source(LUA, "append_before"))
            append = self._append
            if self._wait.replicas:
                (written,) = write_acknowledged(
                    client,
                    self.stream,
                    lambda pipe: append(keys=call.keys(), args=call.args(), client=pipe),
                    self._wait,
                    "the audit record",
                )
            else:
                written = append(keys=call.keys(), args=call.args(), client=client)
        except NotReplicated as exc:
            raise Unavailable(f"{exc.message}, so {unless}") from None
        except (redis.RedisError, OSError, RuntimeError) as exc:
            raise Unavailable(
                f"the audit log (Redis) cannot be written, so {unless}: {type(exc).__name__}: {exc}"
            ) from None
        if written is None:
            raise Unavailable(f"the audit log (Redis) answered too late, so {unless}")

    def note(self, principal: Principal, event: AuditEvent) -> None:
        """Appends the event if Redis answers; a lost record is logged as a warning."""
        try:
            self.record(principal, event, unless="this outcome is not recorded")
        except Unavailable as exc:
            log.warning(
                "audit record lost (%s %s v%d %s by %s): %s",
                event.action,
                event.resource_id,
                event.version,
                event.outcome,
                principal.user_scope,
                exc.message,
            )

    def page(
        self, page_size: int, page_token: str, resource_id: str = ""
    ) -> tuple[list[AuditEvent], str]:
        """Events newest first, from just before `page_token`, and the next token."""
        if page_token and not _STREAM_ID.fullmatch(page_token):
            raise InvalidArgument("page_token", "is not a token this service issued")
        upper = f"({page_token}" if page_token else "+"
        chunk = _FILTERED_CHUNK if resource_id else page_size
        events: list[AuditEvent] = []
        scanned = 0
        try:
            client = self._connect()
            while len(events) < page_size and scanned < _SCAN_MAX:
                entries = stream_entries(
                    client.xrevrange(self.stream, max=upper, min="-", count=chunk)
                )
                scanned += len(entries)
                for entry_id, fields in entries:
                    upper = f"({entry_id.decode()}"
                    event = _event(entry_id.decode(), fields)
                    if not resource_id or event.resource_id == resource_id:
                        events.append(event)
                        if len(events) == page_size:
                            break
                if len(entries) < chunk and len(events) < page_size:
                    return events, ""
            more = stream_entries(client.xrevrange(self.stream, max=upper, min="-", count=1))
        except (redis.RedisError, OSError, RuntimeError) as exc:
            raise Unavailable(
                f"the audit log (Redis) cannot be read: {type(exc).__name__}: {exc}"
            ) from None
        return events, upper[1:] if more else ""


def _event(entry_id: str, fields: dict[bytes, bytes]) -> AuditEvent:
    text = {k.decode(): v.decode() for k, v in fields.items()}
    return AuditEvent(
        action=text.get("action", ""),
        resource_id=text.get("resource_id", ""),
        version=int(text.get("version") or 0),
        outcome=text.get("outcome", ""),
        actor=text.get("actor", ""),
        agent_id=text.get("agent_id", ""),
        detail=text.get("detail", ""),
        time=float(text.get("time") or 0.0),
        id=entry_id,
    )
