"""Evaluations: the evaluation prompt, the three readings of an LLM answer and both spellings,
garbage refused, and helpful / harmful cases applied to the knowledge exactly once — under
retries, concurrent submissions and a knowledge service that is away for a while."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from knowhub import KnowHub, Knowledge

from tests.cognition.conftest import new_trace, query_event, save_knowledge
from tests.conftest import StartHub
from tests.support.harness import Harness
from tests.support.shared import failure

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster


def answer(
    query_sequence: int,
    *rated: tuple[str, str],
    id_key: str = "source_id",
    status_key: str = "status",
) -> dict[str, Any]:
    return {
        "evaluations": [
            {
                "query_sequence": query_sequence,
                "assessments": [
                    {id_key: knowledge_id, status_key: status, "reason": f"{status} because"}
                    for knowledge_id, status in rated
                ],
            }
        ]
    }


def traced_query(
    client: KnowHub, *knowledge: Knowledge, sequence: int = 3, task: str = "renew the certificate"
) -> str:
    trace_id = new_trace()
    client.cognition.append_events(trace_id, [query_event(sequence, *knowledge)], task=task)
    return trace_id


def counters(client: KnowHub, record: Knowledge) -> tuple[int, int]:
    found = client.knowledge.get(record.id).eval
    return found.helpful, found.harmful


def log_types(client: KnowHub, trace_id: str) -> list[str]:
    return [e.type for e in client.cognition.get_log(trace_id, limit=1000)]


# ---- The prompt ---------------------------------------------------------------------------


def queried_trace(alice: KnowHub) -> tuple[str, Knowledge]:
    record = save_knowledge(alice, task="renew TLS certificates", content="use certbot")
    trace_id = new_trace()
    alice.cognition.append_events(
        trace_id,
        [
            {"type": "message", "sequence": 1, "role": "user", "content": "SECRET HISTORY"},
            {**query_event(3, record, text="how to renew"), "response": "run certbot renew"},
        ],
        task="keep the site up",
    )
    return trace_id, record


def test_the_prompt_has_its_sections_and_no_history(server: Harness) -> None:
    alice = server.client("alice")
    trace_id, record = queried_trace(alice)
    prompt = alice.cognition.evaluation_prompt(trace_id, goal="renew the cert")
    assert prompt.query_sequences == [3]
    text = prompt.prompt
    for expected in (
        "## Mission\nkeep the site up",
        "## Current goal\nrenew the cert",
        "## Knowledge queries to evaluate",
        "query_sequence=3",
        "Query: how to renew",
        "Integrated answer:\n> run certbot renew",
        f"source_id: {record.id}\n  task:\n  > renew TLS certificates",
        "  content:\n  > use certbot",
        "## What to do",
        "## Statuses",
        "## Output format",
        '"evaluations"',
        '"assessments"',
    ):
        assert expected in text
    for status in ("irrelevant", "unused", "helpful", "harmful", "neutral"):
        assert f"`{status}`" in text
    assert "SECRET HISTORY" not in text
    other = alice.cognition.evaluation_prompt(trace_id, mission="another mission")
    assert "## Mission\nanother mission" in other.prompt


def test_the_prompt_is_chinese_with_knowhub_language_zh(start_redis_hub: StartHub) -> None:
    alice = start_redis_hub(language="zh").client("alice")
    trace_id, record = queried_trace(alice)
    text = alice.cognition.evaluation_prompt(trace_id, goal="renew the cert").prompt
    for expected in (
        "你是知识评估助手",
        "## 当前任务(Mission)\nkeep the site up",
        "## 当前 Goal\nrenew the cert",
        "## 待评估知识查询",
        "query_sequence=3",
        "查询: how to renew",
        "整合回答:\n> run certbot renew",
        f"source_id: {record.id}",
        "## 评估要求",
        "## 评估分类",
        "## 输出格式",
        "知识对任务有实质帮助",
    ):
        assert expected in text


def test_no_pending_query_means_no_prompt(server: Harness) -> None:
    alice, trace_id = server.client("alice"), new_trace()
    alice.cognition.append_events(trace_id, [query_event(3)])
    prompt = alice.cognition.evaluation_prompt(trace_id)
    assert (prompt.prompt, prompt.query_sequences) == ("", [])


# ---- Reading the answer ------------------------------------------------------------------------


def _raw_forms(document: dict[str, Any]) -> dict[str, str]:
    text = json.dumps(document)
    return {
        "whole": text,
        "fenced": f"Here is my evaluation:\n```json\n{text}\n```\nDone.",
        "bare": f"I think this is right: {text} -- that's all",
    }


@pytest.mark.parametrize("form", ["whole", "fenced", "bare"])
@pytest.mark.parametrize("spelling", [("source_id", "status"), ("knowledge_id", "eval_status")])
def test_each_reading_and_spelling_counts(
    server: Harness, form: str, spelling: tuple[str, str]
) -> None:
    alice = server.client("alice")
    good, bad = save_knowledge(alice), save_knowledge(alice, task="other")
    trace_id = traced_query(alice, good, bad)
    document = answer(
        3, (good.id, "helpful"), (bad.id, "harmful"), id_key=spelling[0], status_key=spelling[1]
    )

    report = alice.cognition.submit_evaluation(trace_id, raw_text=_raw_forms(document)[form])
    assert [(o.knowledge_id, o.status, o.recorded, o.feedback) for o in report.outcomes] == [
        (good.id, "helpful", True, "applied"),
        (bad.id, "harmful", True, "applied"),
    ]
    assert report.pending_query_sequences == []
    assert counters(alice, good) == (2, 0)
    assert counters(alice, bad) == (1, 1)
    case = alice.knowledge.get(bad.id).eval.harmful_history[0]
    assert (case.task, case.outcome, case.reason, case.trace_id, case.query_sequence) == (
        "renew the certificate",
        "harmful",
        "harmful because",
        trace_id,
        3,
    )


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("the knowledge was fine, I guess", "holds no JSON"),
        ("```json\n{not json}\n```", "holds no JSON"),
        ('{"verdict": "good"}', 'has no "evaluations" list'),
    ],
)
def test_an_answer_without_evaluation_json_is_logged_and_never_interrupts(
    server: Harness, raw: str, problem: str
) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    report = alice.cognition.submit_evaluation(trace_id, raw_text=raw)
    assert (report.parse_failed, report.outcomes, report.pending_query_sequences) == (True, [], [3])
    assert problem in report.parse_error
    assert log_types(alice, trace_id) == ["query", "evaluation_failed"]
    [failed] = alice.cognition.get_log(trace_id, types=["evaluation_failed"])
    assert (failed["query_sequences"], failed["answer_excerpt"], failed["gave_up"]) == (
        [3],
        raw,
        False,
    )
    assert problem in failed["reason"]
    assert counters(alice, record) == (1, 0)
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [3]
    # the agent goes on: a readable answer evaluates the query
    report = alice.cognition.submit_evaluation(
        trace_id, raw_text=json.dumps(answer(3, (record.id, "helpful")))
    )
    assert (report.parse_failed, report.pending_query_sequences) == (False, [])


def test_an_empty_answer_is_refused_and_writes_nothing(server: Harness) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    code, message = failure(
        lambda: alice.cognition.submit_evaluation(trace_id, raw_text="", evaluations=[])
    )
    assert (code, message) == (
        "INVALID_ARGUMENT",
        "raw_text: give exactly one of raw_text and evaluations",
    )
    assert log_types(alice, trace_id) == ["query"]
    assert [q["sequence"] for q in alice.cognition.pending_evaluations(trace_id)] == [3]


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"evaluations": ["x"]}, "raw_text.evaluations[0]"),
        (
            {"evaluations": [{"query_sequence": "three", "assessments": []}]},
            "raw_text.evaluations[0].query_sequence",
        ),
        ({"evaluations": [{"query_sequence": 3}]}, "raw_text.evaluations[0].assessments"),
        (
            {"evaluations": [{"query_sequence": 3, "assessments": [{"status": "helpful"}]}]},
            "raw_text.evaluations[0].assessments[0].source_id",
        ),
        (answer(3, ("{good}", "great")), "raw_text.evaluations[0].assessments[0].status"),
        (answer(9, ("{good}", "helpful")), "raw_text.evaluations[0].query_sequence"),
        (
            answer(3, ("knowledge-stranger", "helpful")),
            "raw_text.evaluations[0].assessments[0].knowledge_id",
        ),
        (
            answer(3, ("{good}", "helpful"), ("{good}", "harmful")),
            "raw_text.evaluations[0].assessments[1].knowledge_id",
        ),
        (
            {
                "evaluations": [
                    {
                        "query_sequence": 3,
                        "assessments": [
                            {"source_id": "{good}", "status": "helpful", "reason": "x" * 4_001}
                        ],
                    }
                ]
            },
            "raw_text.evaluations[0].assessments[0].reason",
        ),
    ],
)
def test_each_answer_rule_names_its_field(
    server: Harness, document: dict[str, Any], field: str
) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    raw = json.dumps(document).replace("{good}", record.id)
    code, message = failure(lambda: alice.cognition.submit_evaluation(trace_id, raw_text=raw))
    assert code == "INVALID_ARGUMENT"
    assert message.startswith(f"{field}:"), message
    assert log_types(alice, trace_id) == ["query"]
    assert counters(alice, record) == (1, 0)


def test_structured_evaluations_follow_the_same_rules(server: Harness) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    code, message = failure(
        lambda: alice.cognition.submit_evaluation(
            trace_id,
            evaluations=[
                {"query_sequence": 3, "assessments": [{"knowledge_id": record.id, "status": "meh"}]}
            ],
        )
    )
    assert (code, message.split(":")[0]) == (
        "INVALID_ARGUMENT",
        "evaluations[0].assessments[0].status",
    )
    code, message = failure(
        lambda: alice.cognition.submit_evaluation(
            trace_id,
            raw_text=json.dumps(answer(3, (record.id, "helpful"))),
            evaluations=[{"query_sequence": 3, "assessments": []}],
        )
    )
    assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", "raw_text")
    code, message = failure(
        lambda: alice.cognition.submit_evaluation(
            trace_id, raw_text=json.dumps(answer(3, (record.id, "helpful"))), trigger="lunch"
        )
    )
    assert (code, message.split(":")[0]) == ("INVALID_ARGUMENT", "trigger")
    report = alice.cognition.submit_evaluation(
        trace_id,
        evaluations=[
            {"query_sequence": 3, "assessments": [{"knowledge_id": record.id, "status": "helpful"}]}
        ],
    )
    assert report.outcomes[0].feedback == "applied"
    assert counters(alice, record) == (2, 0)


# ---- Statuses -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["neutral", "unused", "irrelevant"])
def test_other_statuses_are_recorded_but_change_no_counter(server: Harness, status: str) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    report = alice.cognition.submit_evaluation(
        trace_id, raw_text=json.dumps(answer(3, (record.id, status))), trigger="compression"
    )

    assert [(o.status, o.recorded, o.feedback) for o in report.outcomes] == [(status, True, "none")]
    assert counters(alice, record) == (1, 0)
    (event,) = alice.cognition.get_log(trace_id, types=["evaluation"])
    assert event.data == {
        "query_sequence": 3,
        "knowledge_id": record.id,
        "eval_result": {"status": status, "reason": f"{status} because"},
        "evaluated_at_trigger": "compression",
    }
    (summary,) = alice.cognition.trace_view(trace_id).knowledge
    assert getattr(summary, status) == 1 and summary.queried == 1


def test_the_trigger_defaults_to_the_last_signalled_one(server: Harness) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    alice.cognition.signal_trigger(trace_id, "task_completion")
    alice.cognition.submit_evaluation(
        trace_id, raw_text=json.dumps(answer(3, (record.id, "unused")))
    )
    (event,) = alice.cognition.get_log(trace_id, types=["evaluation"])
    assert event["evaluated_at_trigger"] == "task_completion"


# ---- Exactly once -------------------------------------------------------------------------------


def test_a_retried_submission_counts_once(server: Harness) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    raw = json.dumps(answer(3, (record.id, "harmful")))
    first = alice.cognition.submit_evaluation(trace_id, raw_text=raw)
    retries = [alice.cognition.submit_evaluation(trace_id, raw_text=raw) for _ in range(3)]
    changed_mind = alice.cognition.submit_evaluation(
        trace_id, raw_text=json.dumps(answer(3, (record.id, "helpful")))
    )

    assert first.outcomes[0].recorded is True
    for report in [*retries, changed_mind]:
        outcome = report.outcomes[0]
        assert (outcome.recorded, outcome.status, outcome.feedback) == (False, "harmful", "applied")
    assert counters(alice, record) == (1, 1)
    assert log_types(alice, trace_id) == ["query", "evaluation"]


def test_concurrent_submissions_count_once(server: Harness) -> None:
    alice = server.client("alice")
    records = [save_knowledge(alice, task=f"record {n}") for n in range(3)]
    trace_id = traced_query(alice, *records)
    raw = json.dumps(answer(3, *[(r.id, "helpful") for r in records]))
    clients = [server.client("alice") for _ in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        reports = list(
            pool.map(lambda c: c.cognition.submit_evaluation(trace_id, raw_text=raw), clients)
        )

    recorded = [sum(o.recorded for o in r.outcomes) for r in reports]
    assert sorted(recorded) == [0] * 7 + [3]
    assert all(o.feedback == "applied" for r in reports for o in r.outcomes)
    for record in records:
        assert counters(alice, record) == (2, 0)
    assert log_types(alice, trace_id).count("evaluation") == 3


def test_feedback_waits_for_an_absent_knowledge_service_and_counts_once(
    start_redis_hub: StartHub,
) -> None:
    knowledge_hub = start_redis_hub(services=["knowledge"])
    cut_off = start_redis_hub(services=["cognition"], knowledge_address="127.0.0.1:1")
    record = save_knowledge(knowledge_hub.client("alice"))
    alice = cut_off.client("alice")
    trace_id = traced_query(alice, record)
    raw = json.dumps(answer(3, (record.id, "helpful")))

    deferred = alice.cognition.submit_evaluation(trace_id, raw_text=raw)
    outcome = deferred.outcomes[0]
    assert (outcome.recorded, outcome.feedback) == (True, "deferred")
    assert "knowledge" in outcome.detail or "UNAVAILABLE" in outcome.detail
    assert alice.cognition.trace_view(trace_id).knowledge[0].feedback_deferred == 1
    assert counters(knowledge_hub.client("alice"), record) == (1, 0)

    cut_off.stop()
    linked = start_redis_hub(services=["cognition"], knowledge_address=knowledge_hub.address)
    alice = linked.client("alice")
    retried = alice.cognition.submit_evaluation(trace_id, raw_text=raw)
    assert [(o.recorded, o.feedback) for o in retried.outcomes] == [(False, "applied")]
    assert (
        alice.cognition.submit_evaluation(trace_id, raw_text=raw).outcomes[0].feedback == "applied"
    )
    assert counters(knowledge_hub.client("alice"), record) == (2, 0)
    assert alice.cognition.trace_view(trace_id).knowledge[0].feedback_deferred == 0


def test_feedback_for_a_deleted_record_is_refused_and_recorded(server: Harness) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    alice.knowledge.delete(record.id)
    report = alice.cognition.submit_evaluation(
        trace_id, raw_text=json.dumps(answer(3, (record.id, "harmful")))
    )
    outcome = report.outcomes[0]
    assert (outcome.recorded, outcome.feedback) == (True, "refused")
    assert outcome.detail.startswith("NOT_FOUND")
    again = alice.cognition.submit_evaluation(
        trace_id, raw_text=json.dumps(answer(3, (record.id, "harmful")))
    )
    assert (again.outcomes[0].recorded, again.outcomes[0].feedback) == (False, "refused")


def test_another_users_trace_cannot_be_evaluated(server: Harness) -> None:
    alice = server.client("alice")
    record = save_knowledge(alice)
    trace_id = traced_query(alice, record)
    code, _ = failure(
        lambda: server.client("bob").cognition.submit_evaluation(
            trace_id, raw_text=json.dumps(answer(3, (record.id, "harmful")))
        )
    )
    assert code == "NOT_FOUND"
    assert counters(alice, record) == (1, 0)
