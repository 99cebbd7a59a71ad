"""Seed 000's knowledge-evaluation prompt. The agent's own LLM answers it in its side
branch (it has the execution in its context), so the prompt carries no message history."""

from __future__ import annotations

from knowhub_server.cognition.domain import Event

STATUS_MEANINGS = (
    ("irrelevant", "知识与当前任务无关"),
    ("unused", "知识相关但未被使用"),
    ("helpful", "知识对任务有实质帮助"),
    ("harmful", "知识对任务产生负面作用"),
    ("neutral", "知识相关但无明显影响"),
)

_OUTPUT_FORMAT = """\
只输出 JSON,不要输出其他内容:
```json
{
  "evaluations": [
    {
      "query_sequence": 42,
      "assessments": [
        {"source_id": "knowledge-a1b2", "status": "helpful", "reason": "..."},
        {"source_id": "knowledge-c3d4", "status": "irrelevant", "reason": "..."}
      ]
    }
  ]
}
```"""


def evaluation_prompt(mission: str, goal: str, queries: list[Event]) -> str:
    """Mission, goal, the pending queries with their sources, the five statuses and the
    JSON output format."""
    sections = [
        "你是知识评估助手。请评估以下知识查询结果在本次任务执行中的实际效果。",
        f"## 当前任务(Mission)\n{mission or '(未提供)'}",
        f"## 当前 Goal\n{goal or '(未提供)'}",
        "## 待评估知识查询\n" + "\n\n".join(_query_block(q) for q in queries),
        "## 评估要求\n对每个查询引用的每个 source,按 source_id 逐一评估它在本次执行中的实际"
        "效果,依据对话中已有的执行过程判断,并简要说明理由。",
        "## 评估分类\n" + "\n".join(f"- `{s}`: {meaning}" for s, meaning in STATUS_MEANINGS),
        f"## 输出格式\n{_OUTPUT_FORMAT}",
    ]
    return "\n\n".join(sections) + "\n"


def _query_block(query: Event) -> str:
    lines = [f"### 查询 query_sequence={query['sequence']}"
             + (f"(goal {query['goal_id']})" if query["goal_id"] else ""),
             f"查询: {query['query']}"]
    if query["response"]:
        lines.append(f"整合回答: {query['response']}")
    lines.append("来源:")
    described = {s["id"]: s for s in query["sources"]}
    for source_id in query["source_ids"]:
        source = described.get(source_id)
        if source is None:
            lines.append(f"- source_id: {source_id}")
            continue
        lines.append(f"- source_id: {source_id}\n  task: {source['task']}\n"
                     f"  content: {source['content']}")
    return "\n".join(lines)
