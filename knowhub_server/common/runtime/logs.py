"""Process-wide logging: text lines for people or JSON lines for log collectors, each
record tagged with the RPC it belongs to (service, method, request and trace id), and
secrets blanked (redaction.py)."""

from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone
from typing import TextIO

from knowhub_server.common.base.calls import current_call
from knowhub_server.common.security.redaction import RedactSecrets

_OURS = "_knowhub_handler"


class _CallFields(logging.Filter):
    """Puts the current call's fields on the record; outside a call, `service` is the
    process's own name."""

    def __init__(self, process: str) -> None:
        super().__init__()
        self._process = process

    def filter(self, record: logging.LogRecord) -> bool:
        call = current_call.get()
        record.service = call.service if call else self._process
        record.method = call.method if call else ""
        record.request_id = call.request_id if call else ""
        record.trace_id = call.trace_id if call else ""
        return True


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message [method trace=… request=…]`."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        method = getattr(record, "method", "")
        if not method:
            return line
        trace_id = getattr(record, "trace_id", "")
        trace = f" trace={trace_id}" if trace_id else ""
        return f"{line} [{method}{trace} request={getattr(record, 'request_id', '')}]"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, service;
    method and request_id inside an RPC; trace_id when the call carries one; exception
    with the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, timezone.utc)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "service": getattr(record, "service", ""),
        }
        for name in ("method", "request_id", "trace_id"):
            if getattr(record, name, ""):
                entry[name] = getattr(record, name)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False)


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is when a record is emitted, not the stream it was
    when logging was configured (pytest's capture and daemonizing tools replace it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        pass


def configure_logging(
    level: str, log_format: str = "text", *, process: str = "knowhub", stream: TextIO | None = None
) -> logging.Handler:
    """Installs KnowHub's handler on the root logger (replacing one installed before) and
    returns it. `process` names the service(s) this process runs, for records outside
    an RPC."""
    handler = logging.StreamHandler(stream) if stream else _StderrHandler()
    handler.addFilter(_CallFields(process))
    handler.addFilter(RedactSecrets())
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    setattr(handler, _OURS, True)
    root = logging.getLogger()
    for earlier in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(earlier)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "openai"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    return handler
