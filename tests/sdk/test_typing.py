"""The SDK's types as a user's checker sees them: a blocking call gives the result, an
asyncio call a coroutine of it, and mixing the two up is an error (tests/sdk/typing_usage.py
states the rest; `make typecheck` checks it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]


def check(tmp_path: Path, body: str) -> tuple[str, int]:
    source = tmp_path / "usage.py"
    source.write_text("from knowhub import AsyncKnowHub, KnowHub, Knowledge\n\n" + body)
    out, err, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            str(source),
        ]
    )
    return out + err, status


@pytest.mark.parametrize(
    "body",
    [
        "def f(kh: KnowHub) -> None:\n    record: Knowledge = kh.knowledge.get('k')\n",
        "async def f(kh: AsyncKnowHub) -> None:\n"
        "    record: Knowledge = await kh.knowledge.get('k')\n",
    ],
)
def test_a_call_gives_the_result_its_client_promises(tmp_path: Path, body: str) -> None:
    output, status = check(tmp_path, body)
    assert status == 0, output


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        (
            "async def f(kh: AsyncKnowHub) -> None:\n"
            "    record: Knowledge = kh.knowledge.get('k')\n",
            'expression has type "Coroutine[Any, Any, Knowledge]", variable has type "Knowledge"',
        ),
        (
            "async def f(kh: KnowHub) -> None:\n"
            "    record: Knowledge = await kh.knowledge.get('k')\n",
            'Incompatible types in "await" (actual type "Knowledge"',
        ),
        (
            "def f(kh: KnowHub) -> None:\n    kh.knowledge.list(limit='10')\n",
            'Argument "limit" to "list" of "KnowledgeAPI" has incompatible type "str"',
        ),
    ],
)
def test_mixing_up_blocking_and_asyncio_calls_is_a_type_error(
    tmp_path: Path, body: str, complaint: str
) -> None:
    output, status = check(tmp_path, body)
    assert status == 1
    assert complaint in output, output
