"""Search's two stages made safe: which candidates answer the query (stage 1), and the
order quality gives them among records of similar relevance (stage 2)."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from knowhub_server.common.base.scopes import best_priority
from knowhub_server.knowledge.store import Candidate


class Selection(enum.Enum):
    """How a search chose its candidates."""

    ROUTED = "routed"  # the LLM picked them
    RECALL = "recall"  # recall above the relevance floor (no LLM, or it gave no usable pick)
    DEGRADED = "degraded"  # as RECALL, from BM25 alone: the embedding model failed


def above(candidates: Sequence[Candidate], floor: float | None) -> list[Candidate]:
    """The candidates whose relevance reaches `floor` (all of them when None)."""
    if floor is None:
        return list(candidates)
    return [c for c in candidates if c.relevance >= floor]


def rank(
    candidates: Sequence[Candidate], *, band: float, visible: frozenset[str]
) -> list[Candidate]:
    """Stage 2. Records with quality_score < 0 are dropped. The rest go by relevance,
    best first, in bands: a band starts at the most relevant record not yet placed and
    holds every record at most `band` below it; within a band, quality orders (then a
    user profile first, then the most personal scope, then relevance). So quality never
    lifts a record over one more than `band` more relevant. Records whose feedback is
    net harmful (2 * harmful > helpful) come after all the others, ordered alike."""
    kept = [c for c in candidates if c.quality_score >= 0]
    trusted = [c for c in kept if not _harmed(c)]
    harmed = [c for c in kept if _harmed(c)]
    return _banded(trusted, band, visible) + _banded(harmed, band, visible)


def _harmed(candidate: Candidate) -> bool:
    harmful: int = candidate.fields["harmful"]
    helpful: int = candidate.fields["helpful"]
    return 2 * harmful > helpful


def _banded(candidates: list[Candidate], band: float, visible: frozenset[str]) -> list[Candidate]:
    # Stable: candidates of equal relevance keep the order they came in (the LLM's pick).
    by_relevance = sorted(candidates, key=lambda c: -c.relevance)
    ranked: list[Candidate] = []
    start = 0
    while start < len(by_relevance):
        top = by_relevance[start].relevance
        end = start
        while end < len(by_relevance) and top - by_relevance[end].relevance <= band:
            end += 1
        ranked += sorted(
            by_relevance[start:end],
            key=lambda c: (
                -c.quality_score,
                not c.is_user_profile,
                best_priority(c.scopes, visible),
                -c.relevance,
            ),
        )
        start = end
    return ranked
