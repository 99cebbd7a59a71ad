"""SDK model building: µs per conversion of the SDK's by-name models (`from_proto`,
`to_proto`) beside a conversion written out by hand for the same messages, so the price
of converting by field name shows.

Target: by-name conversion no slower than by hand (Knowledge ~30 µs, a 20-hit
search ~650 µs before the by-name models).
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable

from google.protobuf.timestamp_pb2 import Timestamp
from knowhub.models.base import from_timestamp
from knowhub.models.knowledge import (
    Case,
    Eval,
    Knowledge,
    SearchHit,
    SearchResults,
    Source,
    UnavailableResource,
)
from knowhub.models.resources import Resource
from knowhub_contracts.v1 import knowledge_pb2, resource_pb2

from bench.common import TextGenerator

HITS = 20


def _time(seconds: int) -> Timestamp:
    return Timestamp(seconds=seconds, nanos=123_000)


def knowledge_message(text: TextGenerator, index: int) -> knowledge_pb2.Knowledge:
    """A record as a search returns it: text, tags, a source and a few cases."""
    cases = [
        knowledge_pb2.Case(
            task=text.words(8),
            outcome="success",
            reason=text.words(12),
            trace_id=f"trace-{n}",
            timestamp=_time(1_767_225_600 + n),
            query_sequence=n,
        )
        for n in range(3)
    ]
    return knowledge_pb2.Knowledge(
        id=f"knowledge-20260101-{index:012x}",
        message_id=f"m-{index}",
        types=["strategy", "tool"],
        task=text.words(12),
        tags={"lang": "python", "os": "linux"},
        scopes=["user:bench", "org:acme"],
        owner="user:bench",
        content=text.words(60),
        resource_ids=["code/a", "code/b"],
        source=knowledge_pb2.Source(
            name="bench",
            category="exp",
            urls=["https://x.test/a"],
            agent_id="bench_agent",
            submitted_by="user:bench",
            timestamp=_time(1_767_225_600),
            message_id=f"m-{index}",
        ),
        eval=knowledge_pb2.Eval(
            score=4,
            helpful=3,
            harmful=1,
            confidence=0.6,
            helpful_history=cases[:2],
            harmful_history=cases[2:],
        ),
        created_at=_time(1_767_225_600),
        updated_at=_time(1_767_225_700),
    )


def search_message(text: TextGenerator) -> knowledge_pb2.SearchKnowledgeResponse:
    return knowledge_pb2.SearchKnowledgeResponse(
        hits=[
            knowledge_pb2.SearchHit(
                knowledge=knowledge_message(text, n),
                quality_score=6.0,
                relevance=0.5,
                unavailable_resources=[
                    knowledge_pb2.UnavailableResource(
                        resource_id="code/b",
                        reason=knowledge_pb2.UnavailableResource.REASON_MISSING,
                    )
                ],
            )
            for n in range(HITS)
        ],
        routed=True,
    )


def resource_message(text: TextGenerator) -> resource_pb2.Resource:
    resource = resource_pb2.Resource(
        id="code/selenium/login",
        title=text.words(6),
        body=text.words(200),
        content_type=resource_pb2.RESOURCE_CONTENT_TYPE_CODE,
        scopes=["org:acme"],
        owner="user:bench",
        version=3,
        created_at=_time(1_767_225_600),
        updated_at=_time(1_767_225_700),
        expires_at=_time(1_800_000_000),
    )
    resource.metadata.update({"language": "python", "lines": 120})
    return resource


# ---- The same conversions written out by hand ---------------------------------------------


def _case_by_hand(m: knowledge_pb2.Case) -> Case:
    return Case(
        task=m.task,
        outcome=m.outcome,
        reason=m.reason,
        trace_id=m.trace_id,
        timestamp=from_timestamp(m.timestamp),
        query_sequence=m.query_sequence,
    )


def knowledge_by_hand(m: knowledge_pb2.Knowledge) -> Knowledge:
    s, e = m.source, m.eval
    return Knowledge(
        id=m.id,
        message_id=m.message_id,
        types=list(m.types),
        task=m.task,
        tags=dict(m.tags),
        scopes=list(m.scopes),
        owner=m.owner,
        content=m.content,
        resource_ids=list(m.resource_ids),
        source=Source(
            name=s.name,
            category=s.category,
            urls=list(s.urls),
            agent_id=s.agent_id,
            submitted_by=s.submitted_by,
            timestamp=from_timestamp(s.timestamp),
            message_id=s.message_id,
        ),
        eval=Eval(
            score=e.score,
            helpful=e.helpful,
            harmful=e.harmful,
            confidence=e.confidence,
            helpful_history=[_case_by_hand(c) for c in e.helpful_history],
            harmful_history=[_case_by_hand(c) for c in e.harmful_history],
        ),
        created_at=from_timestamp(m.created_at),
        updated_at=from_timestamp(m.updated_at),
    )


def search_by_hand(m: knowledge_pb2.SearchKnowledgeResponse) -> SearchResults:
    reasons = knowledge_pb2.UnavailableResource.Reason
    results = SearchResults(
        SearchHit(
            knowledge=knowledge_by_hand(h.knowledge),
            quality_score=h.quality_score,
            relevance=h.relevance,
            unavailable_resources=[
                UnavailableResource(
                    resource_id=u.resource_id, reason=reasons.Name(u.reason)[7:].lower()
                )
                for u in h.unavailable_resources
            ],
            resources_unverified=h.resources_unverified,
        )
        for h in m.hits
    )
    results.routed = m.routed
    return results


def _microseconds(call: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=5)) / number * 1e6


def run(number: int) -> None:
    text = TextGenerator()
    record, search, resource = (
        knowledge_message(text, 0),
        search_message(text),
        resource_message(text),
    )
    assert knowledge_by_hand(record) == Knowledge.from_proto(record)
    assert search_by_hand(search) == SearchResults.from_proto(search)
    model, results = Knowledge.from_proto(record), SearchResults.from_proto(search)
    rows = [
        (
            "Knowledge.from_proto",
            lambda: Knowledge.from_proto(record),
            lambda: knowledge_by_hand(record),
            number,
        ),
        (
            f"SearchResults.from_proto ({HITS} hits)",
            lambda: SearchResults.from_proto(search),
            lambda: search_by_hand(search),
            max(1, number // HITS),
        ),
        ("Knowledge.to_proto", model.to_proto, None, number),
        (f"SearchResults.to_proto ({HITS} hits)", results.to_proto, None, max(1, number // HITS)),
        ("Resource.from_proto", lambda: Resource.from_proto(resource), None, number),
    ]
    print("\n== SDK: proto -> model conversion, µs per call (best of 5) ==")
    print(f"{'conversion':<38} {'by name':>9} {'by hand':>9}")
    for name, by_name, by_hand, count in rows:
        hand = f"{_microseconds(by_hand, count):9.1f}" if by_hand else f"{'-':>9}"
        print(f"{name:<38} {_microseconds(by_name, count):9.1f} {hand}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--number",
        type=int,
        default=2000,
        help="conversions of one record per timing (a search: / 20)",
    )
    run(parser.parse_args(argv).number)


if __name__ == "__main__":
    main()
