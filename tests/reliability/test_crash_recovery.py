"""kill -9 the services while they take writes (and delete traces), restart them on the same
data directory, and find every acknowledged write there, intact, every acknowledged delete
gone whole, and nothing half-written.

The server is its own process over its own embedded stores (Qdrant Edge, and the
embedded Redis): `knowhub up` with every service, and at full size also each service
alone (`knowhub serve <service>`). Writer threads write through the SDK and keep what
each acknowledged call returned; once enough writes are acknowledged the process gets
SIGKILL while they are still writing."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from knowhub import KnowHub, errors

from knowhub_server.common.storage.redis_store import connect, keyspace
from tests.reliability.conftest import FULL, Report, Scale
from tests.reliability.processes import (
    ServerProcess,
    Writer,
    redis_servers_of,
    wait_until,
    whole_log,
)
from tests.support.harness import write_tokens_file
from tests.support.shared import every_item, visible_records

CLIENT_TIMEOUT = 20.0


@dataclass
class Case:
    """One service's writes and what must hold after the restart."""

    # (alice's client, how many writers, the server's address for other callers' clients)
    writers: Callable[[KnowHub, int, str], list[Writer]]
    verify: Callable[[KnowHub, list[Writer], Path, str], str]


@pytest.fixture
def tokens(tmp_path: Path) -> Path:
    return write_tokens_file(tmp_path)


# ---- knowledge: saves, feedback counted on one record, edits, deletes and forgets --------


def knowledge_writers(kh: KnowHub, count: int, address: str) -> list[Writer]:
    def saver(w: int) -> Callable[[int], Any]:
        def save(n: int) -> tuple[str, str, str]:
            task, content = f"crash task w{w} n{n}", f"content marker{w}x{n} " + "x" * 200
            saved = kh.knowledge.save(
                task=task,
                content=content,
                types=["tool"],
                tags={"writer": str(w), "n": str(n)},
                score=4,
            )
            return saved.id, task, content

        return save

    def feedback(record_id: str) -> Callable[[int], Any]:
        def update(n: int) -> int:
            kh.knowledge.update(
                record_id,
                add_helpful_case={
                    "task": f"case {n}",
                    "outcome": "helped",
                    "trace_id": f"trace-crash-{n}",
                },
            )
            return n

        return update

    writers = [Writer(f"save-{w}", saver(w)) for w in range(count)]
    target = kh.knowledge.save(task="feedback target", content="counted", types=["tool"])
    writers.append(Writer(f"feedback-{target.id}", feedback(target.id)))
    edited = kh.knowledge.save(task="edited target", content="edited -1", types=["tool"])

    def edit(n: int) -> int:
        kh.knowledge.edit(edited.id, content=f"edited {n}", note=f"edit {n}")
        return n

    writers.append(Writer(f"edit-{edited.id}", edit))

    def save_and_delete(n: int) -> tuple[str, str]:
        content = f"deleted marker {n}"
        record = kh.knowledge.save(task=f"deleted task {n}", content=content, types=["tool"])
        kh.knowledge.delete(record.id)
        return record.id, content

    def save_and_forget(n: int) -> str:
        with KnowHub(address, token="token-carol", timeout=CLIENT_TIMEOUT) as carol:
            record = carol.knowledge.save(
                task=f"forgotten task {n}",
                content=f"carol {n}",
                types=["tool"],
                scopes=["user:carol"],
            )
            carol.admin.forget("user:carol")
        return record.id

    writers += [Writer("delete", save_and_delete), Writer("forget", save_and_forget)]
    return writers


def verify_knowledge(kh: KnowHub, writers: list[Writer], _data: Path, address: str) -> str:
    records = visible_records(kh)
    saves = [ack for w in writers if w.name.startswith("save-") for ack in w.acknowledged]
    for record_id, task, content in saves:
        assert record_id in records, f"acknowledged save {record_id} lost"
        assert (records[record_id]["task"], records[record_id]["content"]) == (task, content)
    for record in records.values():  # in-flight saves: whole or absent
        assert record["task"] and record["content"] and record["types"] == ["tool"]
        assert record["eval"]["confidence"] > 0
    [counter] = [w for w in writers if w.name.startswith("feedback-")]
    record_id = counter.name.removeprefix("feedback-")
    helpful = kh.knowledge.get(record_id).eval.helpful
    acknowledged = len(counter.acknowledged)
    # 1 at creation, one per acknowledged case, maybe one more in flight at the kill
    assert helpful in (1 + acknowledged, 2 + acknowledged)
    managed = verify_edits_deletes_forgets(
        kh, {w.name.partition("-")[0]: w for w in writers}, address
    )
    return (
        f"{len(saves)} acknowledged saves and {acknowledged} acknowledged feedback "
        f"updates, all found; {len(records)} records after restart, none partial; "
        f"{managed}"
    )


def verify_edits_deletes_forgets(kh: KnowHub, writers: dict[str, Writer], address: str) -> str:
    """The last acknowledged edit (or the one in flight) is the content, the one before
    it the newest version; each acknowledged delete can be undone whole; each
    acknowledged forget left nothing."""
    editor = writers["edit"]
    record_id = editor.name.removeprefix("edit-")
    last = len(editor.acknowledged) - 1
    record = kh.knowledge.get(record_id)
    applied = int(record.content.removeprefix("edited "))
    assert applied in (last, last + 1), f"edit {last} acknowledged, the record has {applied}"
    newest = kh.knowledge.versions(record_id)[0]
    assert (newest.content, newest.feedback) == (f"edited {applied - 1}", f"edit {applied}")
    deletes = writers["delete"].acknowledged
    for deleted_id, content in deletes:
        with pytest.raises(errors.NotFound):
            kh.knowledge.get(deleted_id)
        assert kh.knowledge.undelete(deleted_id).content == content
    with KnowHub(address, token="token-carol", timeout=CLIENT_TIMEOUT) as carol:
        forgets = writers["forget"].acknowledged
        for forgotten_id in forgets:
            for call in (carol.knowledge.get, carol.knowledge.undelete):
                with pytest.raises(errors.NotFound):
                    call(forgotten_id)
    assert deletes and forgets, "no delete or forget was acknowledged before the kill"
    return (
        f"{len(editor.acknowledged)} acknowledged edits, the last in place with its "
        f"version; {len(deletes)} acknowledged deletes, each undone whole; "
        f"{len(forgets)} acknowledged forgets, nothing left"
    )


# ---- resource: versions with a secure_body ---------------------------------------------

VERSIONS_PER_RESOURCE = 3


def resource_writers(kh: KnowHub, count: int, _address: str) -> list[Writer]:
    def saver(w: int) -> Callable[[int], Any]:
        def save(n: int) -> tuple[str, int, str]:
            resource_id = f"crash/w{w}/r{n // VERSIONS_PER_RESOURCE}"
            secret = f"secret-{w}-{n}"
            saved = kh.resources.save(
                resource_id,
                f"title {n}",
                f"body {w} {n}",
                secure_body=secret,
                content_type="credential",
            )
            return resource_id, saved.version, secret

        return save

    return [Writer(f"resource-{w}", saver(w)) for w in range(count)]


def verify_resources(kh: KnowHub, writers: list[Writer], _data: Path, _address: str) -> str:
    acknowledged = [ack for w in writers for ack in w.acknowledged]
    for resource_id, version, secret in acknowledged:
        got = kh.resources.get(resource_id, include_secure=True, version=version)
        assert (got.version, got.secure_body) == (version, secret)
    in_flight = {
        f"crash/w{w}/r{len(writer.acknowledged) // VERSIONS_PER_RESOURCE}"
        for w, writer in enumerate(writers)
    }
    checked = 0
    for resource_id in sorted({a[0] for a in acknowledged} | in_flight):
        try:  # every kept version, acknowledged or in flight at the kill, decrypts
            head = kh.resources.get(resource_id)
        except errors.NotFound:  # a first save in flight at the kill may be absent
            continue
        versions = kh.resources.versions(resource_id)
        assert [v.version for v in versions] == list(range(head.version, 0, -1))
        for version in versions:
            got = kh.resources.get(resource_id, include_secure=True, version=version.version)
            assert got.secure_body and got.secure_body.startswith("secret-")
            checked += 1
    return (
        f"{len(acknowledged)} acknowledged versions, each decrypts to its secret; "
        f"{checked} kept versions checked, none partial"
    )


# ---- cognition: AppendEvents, and traces deleted whole -----------------------------------


def cognition_writers(kh: KnowHub, count: int, _address: str) -> list[Writer]:
    def appender(w: int) -> Callable[[int], Any]:
        def append(n: int) -> tuple[str, int, str]:
            content = f"message {w}-{n}"
            kh.cognition.append_events(
                f"crash-trace-{w}",
                [{"type": "message", "sequence": n, "role": "user", "content": content}],
                request_id=f"append-{w}-{n}",
            )
            return f"crash-trace-{w}", n, content

        return append

    def deleter(w: int) -> Callable[[int], Any]:
        def create_and_delete(n: int) -> str:
            trace_id = deleted_trace(w, n)
            kh.cognition.append_events(
                trace_id,
                [
                    {"type": "query", "sequence": 1, "query": "q", "source_ids": ["k1", "k2"]},
                    {"type": "message", "sequence": 2, "role": "user", "content": "m"},
                ],
                request_id=f"create-{w}-{n}",
            )
            kh.cognition.save_pending(trace_id, "t", "c", ["tool"], request_id=f"x-{w}-{n}")
            kh.cognition.delete_trace(trace_id)
            return trace_id

        return create_and_delete

    return [
        *(Writer(f"cognition-{w}", appender(w)) for w in range(count)),
        *(Writer(f"cognition-delete-{w}", deleter(w)) for w in range(max(1, count // 2))),
    ]


def deleted_trace(writer: int, n: int) -> str:
    return f"crash-deleted-{writer}-{n}"


def verify_cognition(kh: KnowHub, writers: list[Writer], data: Path, _address: str) -> str:
    appenders = [w for w in writers if not w.name.startswith("cognition-delete-")]
    events = 0
    for writer in appenders:
        if not writer.acknowledged:
            continue
        trace_id = writer.acknowledged[0][0]
        log = whole_log(kh, trace_id)
        written = [(e.data.get("sequence", 0), e["content"]) for e in log]
        acknowledged = [(n, content) for _t, n, content in writer.acknowledged]
        # the acknowledged appends in order, maybe followed by the one in flight
        assert written[: len(acknowledged)] == acknowledged
        assert len(written) - len(acknowledged) in (0, 1)
        trace = kh.cognition.get_log(trace_id, limit=1).trace
        assert trace is not None and trace.event_count == len(written)
        events += len(written)
    acknowledged_total = sum(len(w.acknowledged) for w in appenders)
    deletes = verify_deletes(kh, [w for w in writers if w not in appenders], data)
    return (
        f"{acknowledged_total} acknowledged appends, all found in order; "
        f"{events} events readable after restart, trace counts agree; {deletes}"
    )


def verify_deletes(kh: KnowHub, writers: list[Writer], data: Path) -> str:
    """Each acknowledged delete left nothing of its trace; the trace in flight is whole
    (its log, record and indexes agree) or wholly gone."""
    redis = connect(f"unix://{data / 'redis' / 'redis.sock'}")
    listed = {
        t.trace_id
        for t in every_item(lambda token: kh.cognition.list_traces(limit=100, page_token=token))
    }
    pending = {
        x.trace_id
        for x in every_item(
            lambda token: kh.cognition.list_extractions(limit=100, page_token=token)
        )
    }
    whole = 0
    for w, writer in enumerate(writers):
        for trace_id in writer.acknowledged:
            assert stored_keys(redis, trace_id) == [], f"acknowledged delete {trace_id} left keys"
            assert trace_id not in listed | pending
            with pytest.raises(errors.NotFound):
                kh.cognition.get_log(trace_id)
        in_flight = deleted_trace(w, len(writer.acknowledged))
        try:
            page = kh.cognition.get_log(in_flight, limit=1000)
        except errors.NotFound:
            assert stored_keys(redis, in_flight) == [] and in_flight not in listed | pending
            continue
        assert (
            page.trace is not None and page.trace.event_count == len(page) and in_flight in listed
        ), f"{in_flight} is half there"
        whole += 1
    deleted = sum(len(w.acknowledged) for w in writers)
    assert deleted > 0, "no delete was acknowledged before the kill"
    return (
        f"{deleted} acknowledged deletes left no key or index entry; the traces in "
        f"flight: {whole} whole, {len(writers) - whole} wholly gone"
    )


def stored_keys(redis: redis.Redis, trace_id: str) -> list[str]:
    """The cognition keys and sorted-set members naming alice's trace."""
    base = keyspace("knowhub:", "cognition")
    ref = f"user:alice/{trace_id}"
    found = [k.decode() for k in redis.scan_iter(match=f"{base}*{ref}*", count=1000)]
    for key in redis.scan_iter(match=f"{base}*", count=1000):
        if redis.type(key) == b"zset" and (
            redis.zscore(key, ref) is not None
            or any(m.startswith(f"{ref}|".encode()) for m in redis.zrange(key, 0, -1))
        ):
            found.append(key.decode())
    return found


# ---- dream: Remember, then the historian ------------------------------------------------


def dream_writers(kh: KnowHub, count: int, _address: str) -> list[Writer]:
    def rememberer(w: int) -> Callable[[int], Any]:
        def remember(n: int) -> tuple[str, str, str]:
            user, marker = f"{10000 + w}", f"zq{letters(w)}q{letters(n)}"
            result = kh.memory.remember(
                f"memo {marker}",
                [f"User {user} noted {marker}"],
                context={"user_id": user, "request_type": "private"},
            )
            return result.job_id, user, marker

        return remember

    return [Writer(f"dream-{w}", rememberer(w)) for w in range(count)]


def verify_dream(kh: KnowHub, writers: list[Writer], data: Path, _address: str) -> str:
    jobs = connect(f"unix://{data / 'redis' / 'redis.sock'}")

    def drained() -> bool:
        try:
            return jobs.xlen(keyspace("knowhub:", "historian") + "jobs") == 0
        except redis.ConnectionError:  # the restarted server is starting its Redis
            return False

    wait_until(drained, 60, "the historian to finish the jobs")
    acknowledged = [ack for w in writers for ack in w.acknowledged]
    for job_id, user, marker in acknowledged:
        hits = kh.memory.search_events(marker, target_user_id=user, top_k=3)
        assert [h.event.job_id for h in hits if marker in h.event.text.split()] == [job_id]
    for w, writer in enumerate(writers):  # the last 100 memos: the acknowledged ones in order
        kept = [m.job_id for m in kh.memory.recent_memos(user_id=f"{10000 + w}", limit=100)]
        acknowledged_jobs = [job_id for job_id, _u, _m in writer.acknowledged]
        found = [j for j in kept if j in set(acknowledged_jobs)]
        assert found == acknowledged_jobs[len(acknowledged_jobs) - len(found) :]
        assert len(found) >= min(99, len(acknowledged_jobs))
    assert jobs.xlen(keyspace("knowhub:", "historian") + "failed") == 0
    return f"{len(acknowledged)} acknowledged Remember calls, each job's event and memo found"


def letters(number: int) -> str:
    """A number as a word of letters, so BM25 sees one token: 12 -> "bc"."""
    return "".join("abcdefghij"[int(d)] for d in str(number))


CASES = {
    "knowledge": Case(knowledge_writers, verify_knowledge),
    "resource": Case(resource_writers, verify_resources),
    "cognition": Case(cognition_writers, verify_cognition),
    "dream": Case(dream_writers, verify_dream),
}


# CI kills `knowhub up` (every service in one process, all taking writes); the full run
# also kills each service run alone.
TARGETS = ["up", *CASES] if FULL else ["up"]


@pytest.fixture
def server(tmp_path: Path, tokens: Path, request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    command = ["up"] if request.param == "up" else ["serve", request.param]
    process = ServerProcess(
        command,
        tmp_path / "data",
        {
            "KNOWHUB_TOKENS_FILE": str(tokens),
            "KNOWHUB_HISTORIAN_POLL_INTERVAL_SECONDS": "0.05",
            # the job a killed worker held is taken over after this
            "KNOWHUB_HISTORIAN_STALE_JOB_TIMEOUT_SECONDS": "1",
        },
    )
    yield process
    process.stop()


@pytest.mark.parametrize("server", TARGETS, indirect=True)
def test_kill_9_while_writing_loses_no_acknowledged_write(
    server: ServerProcess, scale: Scale, figures: Report
) -> None:
    target = server.command[-1]
    services = list(CASES) if target == "up" else [target]
    kill_after = int(scale.pick(20, 1000))
    server.start()
    with KnowHub(server.address, token="token-alice", timeout=CLIENT_TIMEOUT) as kh:
        writers = {
            name: CASES[name].writers(kh, int(scale.pick(2, 6)), server.address)
            for name in services
        }
        threads = [w for group in writers.values() for w in group]
        for writer in threads:
            writer.start()
        # enough writes of each service, and at least one of each kind
        wait_until(
            lambda: all(
                sum(len(w.acknowledged) for w in group) >= kill_after
                and all(w.acknowledged for w in group)
                for group in writers.values()
            ),
            scale.pick(30, 600),
            f"{kill_after} acknowledged writes per service",
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
        summaries = [
            f"{name}: {CASES[name].verify(kh, writers[name], server.data_dir, server.address)}"
            for name in services
        ]
    # the Redis the killed process left running was stopped before a new one started
    assert len(redis_servers_of(server.data_dir)) <= 1
    figures(
        f"kill -9 {' '.join(server.command)}: "
        + "; ".join(summaries)
        + f"; restart to serving {ready:.2f}s"
    )
