"""The absolutization gate: each rule of its table on words it must catch and technical
terms it must leave alone, then the historian storing what it catches with
is_absolute=false through a real server."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from knowhub_server.dream.memory.domain import GATE_RULES, gate_hits
from tests.conftest import StartHub
from tests.dream.support import (
    FAST_HISTORIAN,
    REWRITE,
    Queue,
    memory_settings,
    private_context,
    prompt_of,
    rewrite,
    tool_of,
)
from tests.support.openai_stub import OpenAIStub, ToolCalls

pytestmark = pytest.mark.redis_cluster  # also on a Redis Cluster

# (text, kind, what the gate reports) per rule: (kind, language).
CAUGHT: dict[tuple[str, str], list[tuple[str, str]]] = {
    ("pronoun", "zh"): [
        ("我们去吃饭", "我"),
        ("你好", "你"),
        ("他买了书", "他"),
        ("她来了", "她"),
        ("它坏了", "它"),
        ("这位同学", "这位"),
        ("那个人走了", "那个人"),
    ],
    ("pronoun", "en"): [
        ("I fixed it", "I"),
        ("I'm done", "I"),
        ("She moved", "She"),
        ("gave them a call", "them"),
        ("that guy left", "that guy"),
    ],
    ("relative_time", "zh"): [
        (w, w)
        for w in (
            "今早",
            "今晨",
            "昨日",
            "前年",
            "上星期",
            "上个星期",
            "那天",
            "今天",
            "明晚",
            "最近",
            "三天前",
            "3天后",
            "两年前",
            "当时",
        )
    ],
    ("relative_time", "en"): [
        (w, w)
        for w in (
            "three days ago",
            "last Monday",
            "next Friday",
            "yesterday",
            "this morning",
            "a few weeks ago",
            "2 hours later",
            "back then",
            "the other day",
            "recently",
        )
    ],
    ("relative_place", "zh"): [(w, w) for w in ("这里", "那边", "当地", "附近", "隔壁")]
    + [("回本地了", "回本地")],
    ("relative_place", "en"): [
        ("went there", "there"),
        ("moved here", "here"),
        ("a café nearby", "nearby"),
        ("over there", "over there"),
    ],
}
# Technical terms and absolute statements that share letters with a rule.
PASSING = [
    "Python I/O",
    "I/O-bound tasks",
    "a Type I error",
    "排他锁",
    "其他选项",
    "自我介绍",
    "迷你主机",
    "吉他",
    "其它",
    "在本地部署了模型",
    "本地缓存",
    "There are three servers",
    "Is there a fix?",
    "2020年后",
    "Alice (QQ 10001) moved to Berlin on 2024-03-01.",
    "Python 3.11 or later",
    "the latest release",
]


def test_every_rule_of_the_table_is_tested() -> None:
    assert {(r.kind, r.language) for r in GATE_RULES} == set(CAUGHT)


@pytest.mark.parametrize(
    ("rule", "text", "found"),
    [(rule, text, found) for rule, cases in CAUGHT.items() for text, found in cases],
)
def test_the_gate_catches(rule: tuple[str, str], text: str, found: str) -> None:
    assert found in gate_hits(text).get(rule[0], [])


@pytest.mark.parametrize("text", PASSING)
def test_the_gate_lets_through(text: str) -> None:
    assert gate_hits(text) == {}


# ---- Linear time --------------------------------------------------------------------------

LENGTH = 4_000
# Long runs a backtracking pattern would retry from every position: numbers before a unit
# word with no 前/后/ago after it, and no unit at all.
ADVERSARIAL = {
    "一 runs before a unit": "一" * (LENGTH - 1) + "天",
    "一 runs alone": "一" * LENGTH,
    "二 runs before 个月": "二" * (LENGTH - 2) + "个月",
    "mixed number runs before units": ("一二三四五六七八九十两几半数" * 400)[: LENGTH - 1] + "年",
    "digits before an English unit": "1" * (LENGTH - 5) + " days",
    "there before spaces": ("there" + " " * 95) * (LENGTH // 100),
}
BENIGN = ("部署完成后服务运行正常，日志写入磁盘。" * 300)[:LENGTH]


def fastest_check_ms(text: str) -> float:
    """The least time of a few checks: what the pattern costs, less the machine's noise."""
    times = []
    for _ in range(5):
        started = time.perf_counter()
        gate_hits(text)
        times.append(time.perf_counter() - started)
    return min(times) * 1000


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_no_input_costs_the_gate_much_more_than_a_benign_text_of_its_length(name: str) -> None:
    """A backtracking repeat made 4,000 characters of 一 before a unit word cost ~600 ms
    (quadratic) against ~2 ms for ordinary text: the bound here is generous, the old cost
    two orders of magnitude over it."""
    text = ADVERSARIAL[name]
    assert len(text) == pytest.approx(LENGTH, abs=100)
    assert fastest_check_ms(text) < 10 * fastest_check_ms(BENIGN) + 5


def test_bounded_numbers_still_catch_long_relative_times() -> None:
    assert gate_hits("一" * 500 + "天前")["relative_time"] == ["一" * 8 + "天前"]
    assert gate_hits("三十五天前")["relative_time"] == ["三十五天前"]
    assert gate_hits("1000000 years ago")["relative_time"] == ["1000000 years ago"]


# ---- Through the historian --------------------------------------------------------------------

ISSUE_WORDS = [
    "今早",
    "今晨",
    "昨日",
    "前年",
    "上星期",
    "上个星期",
    "那天",
    "three days ago",
    "last Monday",
    "next Friday",
    "went there",
]


def echo_rewrites(request: dict[str, Any]) -> ToolCalls:
    """The historian's LLM: rewrites each observation as itself; merges no profile."""
    if tool_of(request) != REWRITE:
        return ToolCalls([])
    observation = re.search(r"Observation to rewrite:\n(.*)", prompt_of(request))
    assert observation is not None
    return rewrite(observation.group(1))


def test_the_historian_stores_caught_rewrites_as_not_absolute(
    start_hub: StartHub, tokens_file: Path, llm: OpenAIStub, redis_url: str, redis_prefix: str
) -> None:
    llm.responder = echo_rewrites
    hub = start_hub(
        env={**FAST_HISTORIAN, "KNOWHUB_HISTORIAN_REWRITE_MAX_RETRY": "0"},
        **memory_settings(redis_url, redis_prefix, llm),
    )
    alice = hub.client("alice")
    observations = [f"User 10001 marker{n} {word}" for n, word in enumerate(ISSUE_WORDS)]
    observations.append("User 10001 marker99 tuned Python I/O buffers")
    alice.memory.remember("", observations, context=private_context())
    Queue(redis_url, redis_prefix).wait_drained()

    for n, word in enumerate(ISSUE_WORDS):
        [hit] = alice.memory.search_events(f"marker{n}", top_k=1)
        assert hit.event.text == observations[n]
        assert hit.event.is_absolute is False, word
        assert word.split()[-1] in hit.event.warning
    [technical] = alice.memory.search_events("marker99", top_k=1)
    assert (technical.event.is_absolute, technical.event.warning) == (True, "")
