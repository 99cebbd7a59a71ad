"""Records written without their dense vector while the embedding model failed, and the
background task that writes those vectors when the model answers again.

Such a record carries `PENDING` = 1 in its payload, set in the same write that stores it
without the vector and cleared in the same write that adds it, so the mark never
disagrees with the record: a restart finds every one of them again (nothing is kept in
memory), and a record whose text changed meanwhile keeps its mark for the next pass.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from knowhub_server.common.base.errors import NotFound, ServiceError, Unavailable
from knowhub_server.common.base.metrics import Metrics
from knowhub_server.common.llm.embedding import DenseEmbedder
from knowhub_server.common.storage.vectors import (
    DENSE,
    SPARSE,
    Eq,
    Payload,
    Record,
    VectorCollection,
    Vectors,
    Where,
)

log = logging.getLogger(__name__)

PENDING = "vector_pending"  # an integer payload field (indexed): 1 while the vector is owed
_OWED = Where(must=(Eq(PENDING, 1),))


def vectors_now_or_later(
    embedder: DenseEmbedder | None, sparse: list[Vectors], texts: Sequence[str]
) -> list[Vectors]:
    """`sparse` with each text's dense vector added when the model gives them within its
    timeout; else as they are, to be completed later (see `marked`)."""
    if embedder is None or not texts:
        return sparse
    try:
        dense = embedder.embed(texts)
    except Unavailable as exc:
        log.warning(
            "stored %d record(s) without their dense vector, written later: %s",
            len(texts),
            exc.message,
        )
        return sparse
    return [{**item, DENSE: vector} for item, vector in zip(sparse, dense, strict=True)]


def marked(payload: Payload, vectors: Vectors, embedder: DenseEmbedder | None) -> Payload:
    """The payload as stored: with the PENDING mark exactly when its dense vector is owed."""
    owed = embedder is not None and DENSE not in vectors
    if owed:
        return {**payload, PENDING: 1}
    if PENDING in payload:
        return {k: v for k, v in payload.items() if k != PENDING}
    return payload


class _TextMoved(Exception):
    """The record's text changed after its vector was computed."""


class VectorBacklog:
    """Writes the owed dense vectors of one collection, in the background: a pass every
    `interval` seconds (the embedder's breaker keeps a failing model from being asked
    more often than it allows), `batch` records per embedding call."""

    def __init__(
        self,
        name: str,
        collection: VectorCollection,
        embedder: DenseEmbedder,
        text_of: Callable[[Payload], str],
        metrics: Metrics,
        *,
        interval: float = 2.0,
        batch: int = 64,
    ) -> None:
        self.name = name
        self._collection = collection
        self._embedder = embedder
        self._text_of = text_of
        self._interval = interval
        self._batch = batch
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        metrics.embedding_backlog.labels(name).set_function(self.size)

    def size(self) -> int:
        """Records whose dense vector is still owed."""
        return self._collection.count(_OWED)

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, name=f"knowhub-vectors-{self.name}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            if self._embedder.breaker.open:
                continue
            try:
                self.drain()
            except ServiceError as exc:  # the store or the model failed: next pass
                log.warning("%s: owed vectors not written yet: %s", self.name, exc.message)

    def drain(self) -> int:
        """Writes owed vectors until none is left or the model fails (Unavailable);
        returns how many were written."""
        written = 0
        while not self._stop.is_set():
            page, _ = self._collection.scroll(_OWED, self._batch)
            if not page:
                return written
            done = self._fill(page)
            if not done:  # each record of the page changed meanwhile: look again later
                return written
            written += done
        return written

    def _fill(self, page: Sequence[Record]) -> int:
        texts = [self._text_of(r.payload) for r in page]
        vectors = self._embedder.embed(texts)
        done = 0
        for record, text, dense in zip(page, texts, vectors, strict=True):

            def add(current: Record, text: str = text, dense: list[float] = dense) -> Record:
                if self._text_of(current.payload) != text:
                    raise _TextMoved
                payload = {k: v for k, v in current.payload.items() if k != PENDING}
                return Record(
                    key=current.key,
                    payload=payload,
                    vectors={SPARSE: current.vectors[SPARSE], DENSE: dense},
                )

            try:
                self._collection.compare_and_set(record.key, add)
                done += 1
            except NotFound:  # deleted meanwhile: nothing is owed
                done += 1
            except _TextMoved:
                continue
        return done
