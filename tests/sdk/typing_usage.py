"""What a type checker sees of the SDK: `make typecheck` runs mypy --strict over this file.

Never run: each `assert_type` states a type the SDK must give, and each `type: ignore`
marks a mistake the checker must catch (mypy --strict reports an ignore it no longer
needs, so a mistake that stops being an error fails the check too).
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterator
from datetime import datetime
from typing import Any, assert_type

from knowhub import (
    AsyncKnowHub,
    DreamRun,
    EventResults,
    KnowHub,
    Knowledge,
    KnowledgeInjection,
    Page,
    Resource,
    SearchResults,
    Trigger,
)
from knowhub._transport import AsyncStream, Stream
from knowhub.models import KnowledgeVersion, ResourcePage


def blocking(kh: KnowHub) -> None:
    assert_type(kh.knowledge.get("k"), Knowledge)
    assert_type(kh.knowledge.search("q"), SearchResults)
    assert_type(kh.knowledge.list(), Page)
    assert_type(kh.knowledge.versions("k"), list[KnowledgeVersion])
    assert_type(kh.knowledge.delete("k"), datetime | None)  # the purge time
    assert_type(kh.resources.get("code/x"), Resource)
    assert_type(kh.resources.list(), ResourcePage)
    assert_type(kh.resources.destroy("code/x"), int)
    assert_type(kh.memory.search_events("q"), EventResults)
    assert_type(kh.dream.get_run("r"), DreamRun)
    assert_type(kh.cognition.inject_knowledge_for_goal("t", "g", "goal", 1), KnowledgeInjection)
    triggers = kh.cognition.watch_triggers()
    assert_type(triggers, Stream[Trigger])
    assert_type(iter(triggers), Iterator[Trigger])
    for hit in kh.knowledge.search("q"):
        assert_type(hit.knowledge.eval.score, int)

    kh.knowledge.get(42)  # type: ignore[arg-type]
    kh.knowledge.save(task="t", content="c")  # type: ignore[call-arg]
    kh.knowledge.get("k").title  # type: ignore[attr-defined]  # noqa: B018
    wrong: Resource = kh.knowledge.get("k")  # type: ignore[assignment]  # noqa: F841
    with kh:
        pass


async def asyncio(kh: AsyncKnowHub) -> None:
    # Each method is a coroutine function: calling it gives a coroutine of the result.
    call = assert_type(kh.knowledge.get("k"), Coroutine[Any, Any, Knowledge])
    assert_type(await call, Knowledge)
    assert_type(await kh.knowledge.search("q"), SearchResults)
    assert_type(await kh.knowledge.versions("k"), list[KnowledgeVersion])
    assert_type(await kh.resources.destroy("code/x"), int)
    assert_type(await kh.memory.search_events("q"), EventResults)
    assert_type(await kh.dream.get_run("r"), DreamRun)
    assert_type(
        await kh.cognition.inject_knowledge_for_goal("t", "g", "goal", 1), KnowledgeInjection
    )
    triggers = kh.cognition.watch_triggers()
    assert_type(triggers, AsyncStream[Trigger])
    async for trigger in triggers:
        assert_type(trigger, Trigger)

    # A forgotten await: the coroutine is not the record.
    not_awaited: Knowledge = kh.knowledge.get("k")  # type: ignore[assignment]  # noqa: F841
    kh.knowledge.get("k").id  # type: ignore[attr-defined]  # noqa: B018
    async with kh:
        pass
    with kh:  # type: ignore[attr-defined]
        pass
