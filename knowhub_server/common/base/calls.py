"""The RPC a thread is handling, as the server's interceptor (observe.py) sets it: what
each log record is tagged with, and the call's own secrets no record may show."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallContext:
    service: str
    method: str
    request_id: str
    trace_id: str = ""
    # The caller's token, the secure_body sent or read: blanked in the call's log records.
    secrets: set[str] = field(default_factory=set, compare=False, repr=False)


current_call: ContextVar[CallContext | None] = ContextVar("knowhub_call", default=None)
