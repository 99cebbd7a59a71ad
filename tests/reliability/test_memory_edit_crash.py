"""kill -9 the hub while memory is being edited and deleted, restart it on the same data
directory, and find every acknowledged change there: each edited event and memo holds its
last acknowledged text (or the one in flight when the kill came), each acknowledged delete
is still a delete (undoable), and each acknowledged memory document write is its current
revision or an earlier kept one of a later write."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub

from tests.reliability.conftest import Report, Scale
from tests.reliability.processes import ServerProcess, Writer, wait_until
from tests.support.harness import write_tokens_file

CLIENT_TIMEOUT = 20.0


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    tokens = write_tokens_file(tmp_path)
    process = ServerProcess(
        ["up"],
        tmp_path / "data",
        {"KNOWHUB_TOKENS_FILE": str(tokens), "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05"},
    )
    yield process
    process.stop()


def remembered(kh: KnowHub, user: str, text: str) -> str:
    result = kh.memory.remember(
        "", [text], context={"user_id": user, "request_type": "private"}, wait=30
    )
    assert result.job is not None and result.job.state == "done", result
    return f"{result.job_id}_0_sender"


def editor(kh: KnowHub, event_id: str, w: int) -> Callable[[int], Any]:
    def edit(n: int) -> str:
        text = f"User {20000 + w} edit number {n}"
        kh.memory.update_event(event_id, text)
        return text

    return edit


def memo_editor(kh: KnowHub, job_id: str, w: int) -> Callable[[int], Any]:
    def edit(n: int) -> str:
        text = f"memo {w} edit {n}"
        kh.memory.update_memo(job_id, text, user_id=f"{40000 + w}")
        return text

    return edit


def deleter(kh: KnowHub, w: int) -> Callable[[int], Any]:
    def delete(n: int) -> str:
        event_id = remembered(kh, f"{30000 + w}", f"User {30000 + w} fact {n}")
        kh.memory.delete_event(event_id)
        return event_id

    return delete


def documenter(kh: KnowHub, w: int) -> Callable[[int], Any]:
    def write(n: int) -> tuple[int, str]:
        content = f"line {n} of writer {w}"
        document = kh.dream.write_document(f"crash/w{w}.md", content, append=n % 2 == 1)
        return document.revision, document.content

    return write


def test_kill_9_while_editing_memory_loses_no_acknowledged_change(
    server: ServerProcess, scale: Scale, figures: Report
) -> None:
    count, kill_after = int(scale.pick(2, 4)), int(scale.pick(15, 300))
    server.start()
    with KnowHub(server.address, token="token-alice", timeout=CLIENT_TIMEOUT) as kh:
        targets = [
            remembered(kh, f"{20000 + w}", f"User {20000 + w} original") for w in range(count)
        ]
        memos = [
            kh.memory.remember(f"memo {w}", context={"user_id": f"{40000 + w}"}).job_id
            for w in range(count)
        ]
        edits = [Writer(f"edit-{w}", editor(kh, targets[w], w)) for w in range(count)]
        memo_edits = [Writer(f"memo-{w}", memo_editor(kh, memos[w], w)) for w in range(count)]
        deletes = [Writer(f"delete-{w}", deleter(kh, w)) for w in range(count)]
        documents = [Writer(f"doc-{w}", documenter(kh, w)) for w in range(count)]
        threads = edits + memo_edits + deletes + documents
        for writer in threads:
            writer.start()
        wait_until(
            lambda: (
                all(
                    sum(len(w.acknowledged) for w in group) >= kill_after
                    for group in (edits, memo_edits, documents)
                )
                and sum(len(w.acknowledged) for w in deletes) >= count
            ),
            scale.pick(60, 600),
            "acknowledged edits, deletes and writes",
        )
        server.kill()
        for writer in threads:
            writer.stop()
            writer.join(CLIENT_TIMEOUT + 5)
    assert all(w.error is None or w.error.code == "UNAVAILABLE" for w in threads), [
        w.error for w in threads
    ]

    restarted = time.monotonic()
    server.start()
    with KnowHub(server.address, token="token-alice", timeout=CLIENT_TIMEOUT) as kh:
        ready = time.monotonic() - restarted
        for w, (event_id, writer) in enumerate(zip(targets, edits, strict=True)):
            acknowledged = writer.acknowledged
            in_flight = f"User {20000 + w} edit number {len(acknowledged)}"
            assert kh.memory.get_event(event_id).text in (acknowledged[-1], in_flight)
        for w, writer in enumerate(memo_edits):
            [memo] = kh.memory.recent_memos(user_id=f"{40000 + w}")
            assert memo.text in (
                writer.acknowledged[-1],
                f"memo {w} edit {len(writer.acknowledged)}",
            )
        deleted = [event_id for writer in deletes for event_id in writer.acknowledged]
        for event_id in deleted:
            assert kh.memory.get_event(event_id).state == "deleted", event_id
        assert kh.memory.undelete_event(deleted[0]).state == "current"
        for w, writer in enumerate(documents):
            revision, content = writer.acknowledged[-1]
            document = kh.dream.document(f"crash/w{w}.md")
            assert document.revision in (revision, revision + 1)
            if document.revision == revision:
                assert document.content == content
            else:
                assert kh.dream.document(f"crash/w{w}.md", revision=revision).content == content
    edited = sum(len(w.acknowledged) for w in edits)
    written = sum(len(w.acknowledged) for w in documents)
    memo_count = sum(len(w.acknowledged) for w in memo_edits)
    figures(
        f"kill -9 during memory edits: {edited} acknowledged event edits, "
        f"{memo_count} memo edits, "
        f"{len(deleted)} deletes, {written} document writes, all found; restart to "
        f"serving {ready:.2f}s"
    )
