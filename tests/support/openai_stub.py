"""A scripted OpenAI-compatible endpoint on loopback: the one stand-in tests may use.

Chat completions answer from a script (a queue of replies, failures and delays) or from
a responder function. Embeddings are deterministic hashed bags of words, so texts that
share words are close, unless the stub is given a real model's `embed_texts` (see
`tests.support.real_embeddings`) for tests where meaning matters. The embeddings endpoint
can be taken down (`embeddings_down`) or slowed (`embeddings_delay`). Every request body is
recorded for assertions.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Failure:
    """Answer with an HTTP error status."""

    status: int = 500


@dataclass
class Delay:
    """Wait before answering `reply` (to exceed a client timeout)."""

    seconds: float
    reply: str | ToolCalls = "{}"


@dataclass
class ToolCalls:
    """Answer with these function calls: (name, arguments) pairs, arguments sent as JSON
    (a str is sent as it is, to script unreadable arguments)."""

    calls: list[tuple[str, dict[str, Any] | str]]


Responder = Callable[[dict[str, Any]], str | ToolCalls | Failure]


EmbedTexts = Callable[[list[str]], list[list[float]]]


class OpenAIStub:
    def __init__(self, embedding_dim: int = 64, embed_texts: EmbedTexts | None = None) -> None:
        self.embedding_dim = embedding_dim
        self.chat_requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.responder: Responder | None = None
        self.embeddings_down = False
        self.embeddings_delay = 0.0  # seconds each embeddings request waits before answering
        # Lists of numbers even when asked for base64, as some endpoints answer.
        self.embeddings_as_lists = False
        self._embed_texts = embed_texts
        self._script: deque[str | Failure | Delay | ToolCalls] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False  # kept-alive connections may outlive stop()
        # A short poll interval, so stop() returns at once rather than after 0.5 s.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> OpenAIStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *items: str | Failure | Delay | ToolCalls | dict[str, Any]) -> None:
        """Queue the next chat replies; dicts are sent as JSON text."""
        with self._lock:
            for item in items:
                self._script.append(json.dumps(item) if isinstance(item, dict) else item)

    @property
    def pending(self) -> int:
        return len(self._script)

    def embed_all(self, texts: list[str]) -> list[list[float]]:
        """The vectors the endpoint answers with: the real model's when one was given."""
        if self._embed_texts is not None:
            return self._embed_texts(texts)
        return [self.embed(t) for t in texts]

    def embed(self, text: str) -> list[float]:
        vector = [0.0] * self.embedding_dim
        for token in re.findall(r"\w+", text.lower()):
            digest = hashlib.blake2b(token.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "big") % self.embedding_dim] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def _next_chat(self, body: dict[str, Any]) -> str | Failure | Delay | ToolCalls:
        with self._lock:
            self.chat_requests.append(body)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Failure(500)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive without Nagle: clients reuse one connection, as with a real
            # endpoint, and each reply leaves at once.
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.endswith("/chat/completions"):
                    self._chat(body)
                elif self.path.endswith("/embeddings"):
                    self._embeddings(body)
                else:
                    self._send(404, {"error": {"message": "no such endpoint"}})

            def _chat(self, body: dict[str, Any]) -> None:
                item = stub._next_chat(body)
                if isinstance(item, Delay):
                    time.sleep(item.seconds)
                    item = item.reply
                if isinstance(item, Failure):
                    self._send(item.status, {"error": {"message": "scripted failure"}})
                    return
                message: dict[str, Any] = {"role": "assistant", "content": item}
                if isinstance(item, ToolCalls):
                    message = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{i}",
                                "type": "function",
                                "function": {
                                    "name": name,
                                    "arguments": args
                                    if isinstance(args, str)
                                    else json.dumps(args),
                                },
                            }
                            for i, (name, args) in enumerate(item.calls)
                        ],
                    }
                self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "stub"),
                        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                    },
                )

            def _embeddings(self, body: dict[str, Any]) -> None:
                stub.embedding_requests.append(body)
                if stub.embeddings_delay:
                    time.sleep(stub.embeddings_delay)
                if stub.embeddings_down:
                    self._send(503, {"error": {"message": "embeddings down"}})
                    return
                inputs = body.get("input", [])
                inputs = [inputs] if isinstance(inputs, str) else inputs
                as_base64 = body.get("encoding_format") == "base64" and not stub.embeddings_as_lists
                encode = _base64 if as_base64 else list
                self._send(
                    200,
                    {
                        "object": "list",
                        "model": body.get("model", "stub"),
                        "data": [
                            {"object": "embedding", "index": i, "embedding": encode(vector)}
                            for i, vector in enumerate(stub.embed_all(inputs))
                        ],
                        "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                # a client that timed out has closed the connection: nothing to answer
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def _base64(vector: list[float]) -> str:
    """A vector as OpenAI sends it when asked for base64: little-endian float32s."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
