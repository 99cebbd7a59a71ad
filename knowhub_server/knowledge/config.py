"""Knowledge service settings (`KNOWHUB_SEARCH_*`, `KNOWHUB_SLIM_*`)."""

from __future__ import annotations

from pydantic import Field

from knowhub_server.common.base.config import HubSettings


class KnowledgeSettings(HubSettings):
    search_recall_multiplier: float = Field(
        2.0, ge=1.0, le=20.0, description="Candidates recalled per result (2 gives 2*top_k)."
    )
    search_hybrid_pool: int = Field(
        50,
        ge=1,
        le=1000,
        description="Hybrid search: records each of BM25 and dense "
        "search recalls as candidates; every candidate is then scored by both.",
    )
    search_dense_weight: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Hybrid search: weight of the cosine similarity "
        "in a record's relevance; BM25, divided by the best score the query can reach, gets "
        "the rest. Depends on the embedding model's range of cosines; 0.6 was chosen for "
        "all-MiniLM-L6-v2 on LoCoMo (see the benchmarks in the docs).",
    )
    search_feedback_docs: int = Field(
        0,
        ge=0,
        le=20,
        description="BM25-only recall: expand the query with the terms of "
        "this many top records and search again (pseudo-relevance feedback; 3 is a good "
        "value); 0 turns it off.",
    )
    search_feedback_terms: int = Field(
        20, ge=1, le=200, description="Expansion terms added to the query."
    )
    search_feedback_weight: float = Field(
        0.5, gt=0.0, le=5.0, description="Weight of the expansion terms against the query's."
    )
    search_routing: bool = Field(
        True,
        description="Let the LLM pick the candidates (stage 1) when an LLM is "
        "configured, whether or not the query's words matched any record.",
    )
    search_routing_catalog_max: int = Field(
        300,
        ge=0,
        le=5000,
        description="Routing: when the caller's visible, filtered "
        "records number at most this many, the LLM chooses among all of them (id, types, "
        "first 100 characters of the task: one prompt); above it, among the "
        "KNOWHUB_SEARCH_ROUTING_POOL records recall finds.",
    )
    search_routing_pool: int = Field(
        100,
        ge=1,
        le=500,
        description="Routing over a catalog larger than "
        "KNOWHUB_SEARCH_ROUTING_CATALOG_MAX: records recalled (BM25, or hybrid with "
        "embeddings) for the LLM to choose from.",
    )
    search_routing_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="The longest the routing step may take, the LLM's retries "
        "included; after it, search keeps the records recall finds above the relevance "
        "floor.",
    )
    search_min_relevance: float = Field(
        0.25,
        ge=0.0,
        le=1.0,
        description="Relevance floor of hybrid recall (BM25 and "
        "dense): without an LLM's pick, a search returns only records at least this "
        "relevant (0..1), so a question nothing answers gets nothing. The highest floor "
        "that kept LoCoMo recall@10 within 0.01 of none, for all-MiniLM-L6-v2 at the "
        "default dense weight (see the benchmarks in the docs); another model needs its "
        "own. A request's min_relevance overrides it.",
    )
    search_min_relevance_bm25: float = Field(
        0.15,
        ge=0.0,
        le=1.0,
        description="Relevance floor when recall is BM25 alone (no "
        "embedding model, or the model is failing): BM25 over the best score the query "
        "can reach, 0..1; chosen as KNOWHUB_SEARCH_MIN_RELEVANCE was. A request's "
        "min_relevance overrides it.",
    )
    search_relevance_band: float = Field(
        0.03,
        ge=0.0,
        le=1.0,
        description="Stage 2: records within this much relevance "
        "of the band's most relevant one are ordered by quality (score + helpful - 2 * "
        "harmful); quality never lifts a record above one more relevant than that. The "
        "widest band that kept LoCoMo recall@10 with author scores 3-5 within 0.02 of "
        "uniform scores (see the benchmarks in the docs).",
    )
    resource_check_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="How long a save or search waits for the resource service "
        "to check resource_ids.",
    )
    feedback_untraced_max: int = Field(
        3,
        ge=0,
        le=1000,
        description="Helpful and harmful cases without a trace_id one "
        "user may add to one record; one more is FAILED_PRECONDITION. A case with a "
        "trace_id counts once per user, record and trace (later ones of the same trace "
        "change nothing), so an agent that uses a record in many traces still raises it.",
    )
    slim_similarity: float = Field(
        0.8,
        gt=0,
        le=1.0,
        description="Token Jaccard similarity that makes two records near-duplicates for slim.",
    )
    knowledge_retention_hours: float = Field(
        720.0,
        ge=0.0,
        le=87_600.0,
        description="How long a deleted knowledge record can "
        "be brought back (UndeleteKnowledge) before it is purged for good; 0 purges at the "
        "next sweep.",
    )
    knowledge_purge_interval_seconds: float = Field(
        300.0,
        gt=0.0,
        le=86_400.0,
        description="How often each knowledge process erases "
        "the deleted records whose retention has passed.",
    )
