"""How a collection runs its BM25 searches so that they stay fast as the store grows.

Two costs of the engine grow with the records a filter leaves, and both are avoided here
with the same answers:

- Term statistics (IDF) over a search's corpus (KNOWHUB_VECTOR_TENANT_IDF): the engine
  walks each query term's postings through the corpus filter. `SparseSearch` reads each
  (corpus, term) pair's ratio of IDFs, over the corpus and over the whole collection,
  once, by two probes in one call (the term alone over the corpus, with the corpus's and
  with the collection's statistics: both score the corpus's top record); a search
  then runs with the collection's statistics, which cost nothing, each term's weight times
  its ratio: the same scores to float precision. The first probe also gives the best
  score one record gets on the term alone, which bounds BM25 in hybrid fusion. A corpus
  that holds every record of the collection (counted again after any write: the common
  case of a caller who sees the whole store) has the collection's statistics: its
  searches read no ratio, and its bounds come from probes without a filter, shared by
  every such corpus.
- A filter that leaves a large share of the records: the engine checks it posting by
  posting, where without a filter it skips postings that cannot reach the top. So such a
  search first takes the best matches of the whole collection, oversampled by the share
  the filter leaves, and keeps those the filter leaves: when at least `limit` remain, no
  record outside them can rank above them, so they are the answer; otherwise (or when the
  filter leaves few records, or too small a share for a small pool, or the records are in
  so many segments that looking the pool up costs more than the filter) the filtered
  search runs as asked.

What is read is kept until as many records were written since as 1% of those it was read
from (an IDF then moves by about 1%, more for a term most records hold, which weighs
little in any score) and, for a store other processes write too, for a minute at most.
What was read of a term is forgotten as soon as this process writes a record holding it
(its best record may have changed), and all of it on a delete.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from cachetools import LRUCache
from qdrant_edge import SparseVector

from knowhub_server.common.storage.vectors import (
    HasKey,
    HasPoint,
    Hit,
    SearchQuery,
    VectorCollection,
    Where,
    among,
)

STALE_SHARE = 0.01  # of the collection's records written, after which a reading is stale
SHARED_TTL_SECONDS = 60.0  # the longest a reading is kept when other processes write too
ENTRIES = 50_000  # readings kept, least recently used first out
# A filter leaving at least this many records takes the shortcut (below, the filtered
# search is fast), when the pool it needs times the collection's segments is at most
# `SHORTCUT_MAX_LOOKUPS`: the engine looks each pooled record up by id in each segment
# (a pool of 50 cost 0.2 ms over 2 segments, 3.2 ms over 51, at 100k and 1M records), and
# past this the filtered search was as fast. The pool oversamples the `limit` records
# the filter should leave among it, plus a margin.
SHORTCUT_MIN_RECORDS = 20_000
SHORTCUT_OVERSAMPLE = 2.0
SHORTCUT_MARGIN = 8
SHORTCUT_MAX_LOOKUPS = 256
SEGMENTS = "segments"
EVERYTHING = Where()
# A corpus is counted exactly, to tell whether it holds every record, only when its
# estimate is at least this share of the collection's (estimates are kept, counts not).
WHOLE_ESTIMATE = 0.95

K = TypeVar("K")
V = TypeVar("V")
Pair = tuple[Where, int]  # (corpus, term)


@dataclass(frozen=True)
class _Reading(Generic[V]):
    value: V
    writes: int  # the collection's writes (by this process) when it was read
    read_at: float  # time.monotonic() then
    records: int  # the records it was read from: stale once 1% of as many were written


class Readings(Generic[K, V]):
    """Values read from a collection, kept while fresh enough (see the module's text)."""

    def __init__(self, shared: bool) -> None:
        self._shared = shared
        self._entries: LRUCache[K, _Reading[V]] = LRUCache(ENTRIES)
        self._lock = threading.Lock()
        self.writes = 0

    def wrote(self, count: int) -> None:
        with self._lock:
            self.writes += count

    def forget(self, keys: Iterable[K]) -> None:
        with self._lock:
            for key in keys:
                self._entries.pop(key, None)

    def forget_all(self) -> None:
        with self._lock:
            self._entries.clear()

    def get_or_read(
        self, keys: set[K], read: Callable[[list[K]], dict[K, V]], records: Callable[[K, V], int]
    ) -> dict[K, V]:
        """The values of `keys`: those kept and fresh, and the others read now
        (`records` tells how many records a key's value was read from)."""
        values = self._known(keys)
        missing = [key for key in keys if key not in values]
        if missing:
            writes = self.writes
            fresh = read(missing)
            read_at = time.monotonic()
            readings = {
                key: _Reading(value, writes, read_at, records(key, value))
                for key, value in fresh.items()
            }
            with self._lock:
                self._entries.update(readings)
            values |= fresh
        return values

    def _fresh(self, entry: _Reading[V], now: float) -> bool:
        since = self.writes - entry.writes
        return (since == 0 or since < entry.records * STALE_SHARE) and not (
            self._shared and now - entry.read_at > SHARED_TTL_SECONDS
        )

    def _known(self, keys: Iterable[K]) -> dict[K, V]:
        now = time.monotonic()
        with self._lock:
            found = {key: self._entries.get(key) for key in keys}
            return {
                key: entry.value
                for key, entry in found.items()
                if entry is not None and self._fresh(entry, now)
            }


@dataclass(frozen=True)
class TermReading:
    """What the records of a corpus hold of one term."""

    best: float  # the best score one record gets on the term alone, at weight 1 (0: none)
    ratio: float  # the term's IDF over the corpus / over the collection (1 without tenant IDF)


class SparseSearch:
    """Plans a collection's BM25 searches (dense ones pass through as they are)."""

    def __init__(self, *, tenant_idf: bool, shared: bool) -> None:
        self._tenant_idf = tenant_idf
        self._terms: Readings[Pair, TermReading] = Readings(shared)
        self._counts: Readings[Where, float] = Readings(shared)
        self._layout: Readings[str, int] = Readings(shared)
        # Whether a corpus holds every record: read from no records, so stale on any write.
        self._whole: Readings[Where, bool] = Readings(shared)
        self._corpora_of: dict[int, set[Where]] = {}  # term -> corpora read for it
        self._corpora_noted = 0  # pairs in _corpora_of
        self._lock = threading.Lock()

    def wrote(self, count: int, terms: Iterable[int] | None) -> None:
        """`count` records were written, holding `terms` (None: unknown, as on deletes):
        a term's best record may have changed, its statistics moved a little."""
        for readings in (self._terms, self._counts, self._layout, self._whole):
            readings.wrote(count)
        if terms is None:
            self._terms.forget_all()
            return
        with self._lock:
            touched = [
                (corpus, term) for term in set(terms) for corpus in self._corpora_of.pop(term, ())
            ]
            self._corpora_noted -= len(touched)
        self._terms.forget(touched)

    def search(
        self, collection: VectorCollection, queries: Sequence[SearchQuery]
    ) -> list[list[Hit]]:
        return self._planned(collection, self._with_statistics(collection, queries))

    def search_bounded(
        self,
        collection: VectorCollection,
        queries: Sequence[SearchQuery],
        where: Where,
        sparse: SparseVector,
    ) -> tuple[list[list[Hit]], list[float]]:
        """`search`, and for each of `sparse`'s terms the best score one record of `where`
        gets on that term alone (statistics over `where` with tenant IDF; 0 where none
        holds it): BM25's bound. New terms' bounds over a corpus holding every record are
        read in the same engine call as the searches (unless a search takes the
        shortcut)."""
        planned = self._with_statistics(collection, queries)
        corpus = EVERYTHING if self._holds_everything(collection, {where}) else where
        indices = list(sparse.indices)
        pairs = {(corpus, t) for t in indices}
        if corpus.empty and not any(self._shortcut_pools(collection, planned)):
            readings, found = self._read_terms(collection, pairs, along=planned)
        else:
            found = self._planned(collection, planned) if planned else []
            readings, _ = self._read_terms(collection, pairs)
        bounds = [
            v * readings[(corpus, t)].best for t, v in zip(indices, sparse.values, strict=True)
        ]
        return found, bounds

    # -- term statistics --

    def _with_statistics(
        self, collection: VectorCollection, queries: Sequence[SearchQuery]
    ) -> list[SearchQuery]:
        """The queries as the engine runs them: BM25 with the collection's statistics,
        each term's weight carrying its corpus's (with tenant IDF)."""
        if not self._tenant_idf:
            return [
                dataclasses.replace(q, collection_idf=True) if q.sparse is not None else q
                for q in queries
            ]
        apart = [q for q in queries if _corpus_apart(q)]
        whole = self._holds_everything(collection, {q.idf_corpus for q in apart})
        wanted = {
            (q.idf_corpus, term)
            for q in apart
            if q.idf_corpus not in whole
            for term in q.sparse.indices  # type: ignore[union-attr]
        }
        readings, _ = self._read_terms(collection, wanted)
        return [_with_collection_idf(q, readings, whole) for q in queries]

    def _holds_everything(self, collection: VectorCollection, corpora: set[Where]) -> set[Where]:
        """The corpora holding every record of the collection (as of the last write):
        their statistics are the collection's, so their searches need no term read
        (the common case of a caller who sees the whole store)."""
        apart = {corpus for corpus in corpora if not corpus.empty}
        if not apart:
            return corpora
        # Exact counts only where the kept estimates leave it possible.
        estimates = self._estimates(collection, apart | {EVERYTHING})
        close = {c for c in apart if estimates[c] >= estimates[EVERYTHING] * WHOLE_ESTIMATE}
        holds = self._whole.get_or_read(
            close, lambda missing: _counted_whole(collection, missing), lambda *_: 0
        )
        return {corpus for corpus in corpora if corpus.empty or holds.get(corpus, False)}

    def _read_terms(
        self, collection: VectorCollection, pairs: set[Pair], along: Sequence[SearchQuery] = ()
    ) -> tuple[dict[Pair, TermReading], list[list[Hit]]]:
        """The pairs' readings, kept or read now, and the answers of `along` (searches
        sent as they are, in the same engine call as the reading when there is one)."""
        answered: list[list[Hit]] = []

        def read(missing: list[Pair]) -> dict[Pair, TermReading]:
            readings, found = self._probe(collection, missing, along)
            answered.extend(found)
            return readings

        with self._lock:
            if self._corpora_noted > 2 * ENTRIES:  # pairs the LRU dropped long ago
                self._terms.forget_all()
                self._corpora_of.clear()
                self._corpora_noted = 0
            for corpus, term in pairs:  # before reading: a write meanwhile forgets it
                corpora = self._corpora_of.setdefault(term, set())
                if corpus not in corpora:
                    corpora.add(corpus)
                    self._corpora_noted += 1
        readings = self._terms.get_or_read(
            pairs,
            read,
            lambda pair, _: int(self._estimates(collection, {pair[0]})[pair[0]]),
        )
        if along and len(answered) != len(along):  # nothing was read
            answered = collection._search_batch(along)
        return readings, answered

    def _estimates(self, collection: VectorCollection, wheres: set[Where]) -> dict[Where, float]:
        """About how many records each filter leaves: kept as term statistics are, so
        a search reading a new term's statistics asks the engine no more than that."""
        return self._counts.get_or_read(
            wheres,
            lambda missing: {w: float(collection.estimate(w)) for w in missing},
            lambda _, count: int(count),
        )

    def _probe(
        self, collection: VectorCollection, pairs: list[Pair], along: Sequence[SearchQuery] = ()
    ) -> tuple[dict[Pair, TermReading], list[list[Hit]]]:
        """Each term alone, its corpus's top record (at weight 1) with the collection's
        statistics; with tenant IDF and a corpus apart, the same search again with the
        corpus's, in the same call: the ratio of the two IDFs. A term alone ranks the
        corpus's records by their weight of it whatever the IDF (a positive factor), so
        both searches score the same best record, and the ratio of their scores is that
        of the IDFs. `along`'s searches go in the same call; their answers come second."""
        apart = [i for i, (corpus, _) in enumerate(pairs) if self._tenant_idf and not corpus.empty]
        tops = [_term_alone(term, corpus, collection_idf=True) for corpus, term in pairs]
        if apart or along:
            own = [_term_alone(pairs[i][1], pairs[i][0], collection_idf=False) for i in apart]
            found = collection._search_batch([*along, *tops, *own])
            answered, found = found[: len(along)], found[len(along) :]
        else:
            found, answered = self._planned(collection, tops), []
        best = [hits[0].score if hits else 0.0 for hits in found]
        ratios = [1.0] * len(pairs)
        for i, corpus_best in zip(apart, best[len(pairs) :], strict=True):
            # A term no record of the corpus holds scores nothing there: any weight will do.
            if corpus_best > 0 and best[i] > 0:
                ratios[i] = corpus_best / best[i]
            best[i] = corpus_best
        return {pair: TermReading(best[i], ratios[i]) for i, pair in enumerate(pairs)}, answered

    # -- the shortcut for filters that leave a large share --

    def _planned(
        self, collection: VectorCollection, queries: Sequence[SearchQuery]
    ) -> list[list[Hit]]:
        pools = self._shortcut_pools(collection, queries)
        if not any(pools):
            return collection._search_batch(queries)
        return _search_through_shortcut(collection, list(queries), pools)

    def _shortcut_pools(
        self, collection: VectorCollection, queries: Sequence[SearchQuery]
    ) -> list[int]:
        """For each query, how many of the collection's best matches to look among
        first (0: search as asked)."""
        wide = {q.where for q in queries if _may_take_shortcut(q)}
        if not wide:
            return [0] * len(queries)
        counts = self._estimates(collection, wide | {Where()})
        total = counts[Where()]
        segments = self._layout.get_or_read(
            {SEGMENTS}, lambda _: {SEGMENTS: collection.segments()}, lambda *_: int(total)
        )[SEGMENTS]
        return [
            _pool(q, counts[q.where], total, segments) if _may_take_shortcut(q) else 0
            for q in queries
        ]


def _counted_whole(collection: VectorCollection, corpora: Iterable[Where]) -> dict[Where, bool]:
    total = collection.count(EVERYTHING)
    return {corpus: collection.count(corpus) == total for corpus in corpora}


def _corpus_apart(query: SearchQuery) -> bool:
    """Whether the query's BM25 statistics come from part of the collection."""
    return query.sparse is not None and not query.collection_idf and not query.idf_corpus.empty


def _with_collection_idf(
    query: SearchQuery, readings: dict[Pair, TermReading], whole: set[Where]
) -> SearchQuery:
    if query.sparse is None or query.collection_idf:
        return query
    if not _corpus_apart(query) or query.idf_corpus in whole:
        return dataclasses.replace(query, collection_idf=True)
    corpus = query.idf_corpus
    indices = list(query.sparse.indices)  # each access converts the engine's list: read once
    values = [
        v * readings[(corpus, t)].ratio for t, v in zip(indices, query.sparse.values, strict=True)
    ]
    return dataclasses.replace(query, sparse=SparseVector(indices, values), collection_idf=True)


def _term_alone(term: int, where: Where, *, collection_idf: bool) -> SearchQuery:
    return SearchQuery(
        where,
        1,
        sparse=SparseVector([term], [1.0]),
        with_payload=False,
        collection_idf=collection_idf,
    )


def _may_take_shortcut(query: SearchQuery) -> bool:
    """A BM25 search with a filter that does not already name its records."""
    return (
        query.sparse is not None
        and not query.where.empty
        and not any(isinstance(c, HasPoint | HasKey) for c in query.where.must)
    )


def _pool(query: SearchQuery, leaves: float, total: float, segments: int) -> int:
    """The collection's best matches to look among first, given the records the query's
    filter leaves (estimated) of the total and the segments they are in; 0: search as
    asked."""
    if leaves < SHORTCUT_MIN_RECORDS:
        return 0
    wanted = math.ceil(query.limit * SHORTCUT_OVERSAMPLE * total / leaves) + SHORTCUT_MARGIN
    return wanted if wanted * max(segments, 1) <= SHORTCUT_MAX_LOOKUPS else 0


def _search_through_shortcut(
    collection: VectorCollection, queries: list[SearchQuery], pools: list[int]
) -> list[list[Hit]]:
    """The queries' answers, those with a pool looked for among the collection's best
    matches first (exact: see the module's text); the rest, and those whose pool left
    too few, searched as asked."""
    taking = [i for i, pool in enumerate(pools) if pool]
    best = collection._search_batch(
        [
            SearchQuery(
                Where(), pools[i], sparse=queries[i].sparse, with_payload=False, collection_idf=True
            )
            for i in taking
        ]
    )
    planned = list(queries)
    complete = {}
    for i, hits in zip(taking, best, strict=True):
        # Fewer than asked: these are all the records sharing a term with the query.
        complete[i] = len(hits) < pools[i]
        planned[i] = dataclasses.replace(
            queries[i], where=among(queries[i].where, tuple(h.point_id for h in hits))
        )
    # A query no record shares a term with has no answer: nothing to look up.
    empty = {i for i, hits in zip(taking, best, strict=True) if not hits}
    asked = [i for i in range(len(queries)) if i not in empty]
    answers = iter(collection._search_batch([planned[i] for i in asked]) if asked else [])
    results = [[] if i in empty else next(answers) for i in range(len(queries))]
    retry = [i for i in taking if not complete[i] and len(results[i]) < queries[i].limit]
    if retry:
        for i, hits in zip(
            retry, collection._search_batch([queries[i] for i in retry]), strict=True
        ):
            results[i] = hits
    return results
