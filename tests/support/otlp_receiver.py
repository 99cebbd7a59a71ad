"""An OTLP/HTTP traces receiver on loopback, as a collector answers: POST /v1/traces with
an ExportTraceServiceRequest (protobuf, gzip or deflate as the sender chose), decoded with
opentelemetry-proto and kept for the test to read."""

from __future__ import annotations

import gzip
import threading
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


@dataclass
class Received:
    """One span as the receiver decoded it, with its resource's attributes."""

    span: Span
    resource: dict[str, Any]

    @property
    def attributes(self) -> dict[str, Any]:
        return attributes(self.span.attributes)

    @property
    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return [(e.name, attributes(e.attributes)) for e in self.span.events]


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(pairs: list[KeyValue]) -> dict[str, Any]:
    return {pair.key: value(pair.value) for pair in pairs}


class OTLPReceiver:
    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self.answer_status = 200  # a test sets an error status to be refused
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                if self.path != "/v1/traces" or receiver.answer_status != 200:
                    self.send_response(404 if self.path != "/v1/traces" else receiver.answer_status)
                    self.end_headers()
                    return
                receiver.requests.append(ExportTraceServiceRequest.FromString(body))
                receiver.headers.append(dict(self.headers))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    def start(self) -> OTLPReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def spans(self) -> list[Received]:
        found = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    found += [Received(span, resource) for span in scope.spans]
        return found
