"""The trace log file: `{trace_id, events: [...]}` (cognition_log.json), and the legacy
`knowledge_log.json` whose list is called `entries`.

Legacy entries without a `type` are read as evaluations when they name a query_sequence and
as queries when they carry a query; an evaluation written flat (`status` / `eval_status`,
`reason`, `source_id`) is read as an evaluation's `eval_result` and `knowledge_id`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from knowhub_server.cognition.domain import Event, Trace, iso_seconds, objects, shown_payloads
from knowhub_server.common.base import json_input
from knowhub_server.common.base.errors import InvalidArgument
from knowhub_server.common.base.times import iso
from knowhub_server.common.security.auth import Principal


@dataclass
class LogDocument:
    trace_id: str
    task: str
    agent_id: str
    events: list[tuple[str, dict[str, Any]]]  # (where in the file, the raw event)


def export_document(trace: Trace, events: list[Event], viewer: Principal) -> str:
    """The trace as a log file (event ids are the server's and are left out),
    its agents and resources named as the viewer names them."""
    document = {
        "trace_id": trace.trace_id,
        "task": trace.task,
        "agent_id": viewer.show(trace.agent_id),
        "events": [
            shown_payloads({k: v for k, v in e.items() if k != "event_id"}, viewer) for e in events
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=1)


def read_document(text: str) -> LogDocument:
    try:
        data = json_input.loads(text)
    except ValueError as error:
        raise InvalidArgument("document", f"is not JSON we read: {error}") from None
    if not isinstance(data, dict) or not ({"events", "entries"} & set(data)):
        raise InvalidArgument(
            "document", 'must be a JSON object with an "events" list (or the legacy "entries")'
        )
    name = "events" if "events" in data else "entries"
    events = []
    for where, item in objects(data[name], f"document.{name}", "must be an object"):
        event = _legacy_event(item, where) if name == "entries" else dict(item)
        events.append((where, _with_times(event, where)))
    return LogDocument(
        trace_id=_text(data, "trace_id"),
        task=_text(data, "task"),
        agent_id=_text(data, "agent_id"),
        events=events,
    )


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name) or ""
    if not isinstance(value, str):
        raise InvalidArgument(f"document.{name}", "must be a string")
    return value


def _legacy_event(entry: dict[str, Any], where: str) -> dict[str, Any]:
    event = dict(entry)
    if "type" not in event:
        if "query_sequence" in event:
            event["type"] = "evaluation"
        elif "query" in event:
            event["type"] = "query"
        else:
            raise InvalidArgument(
                where,
                "has no type and is neither an evaluation (no "
                "query_sequence) nor a query (no query)",
            )
    if event["type"] == "evaluation":
        if "knowledge_id" not in event and "source_id" in event:
            event["knowledge_id"] = event.pop("source_id")
        if "eval_result" not in event:
            status = event.pop("status", event.pop("eval_status", ""))
            event["eval_result"] = {"status": status, "reason": event.pop("reason", "")}
    return event


def _with_times(event: dict[str, Any], where: str) -> dict[str, Any]:
    """Times in the server's form (UTC, ISO 8601); a file's times without zone are UTC."""
    for name in ("timestamp", "consumed_at"):
        value = event.get(name)
        if value in (None, ""):
            event.pop(name, None)
            continue
        if not isinstance(value, str):
            raise InvalidArgument(f"{where}.{name}", "must be an ISO 8601 string")
        try:
            event[name] = iso(iso_seconds(value))
        except ValueError as error:
            raise InvalidArgument(f"{where}.{name}", str(error)) from None
    return event
