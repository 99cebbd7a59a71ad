import datetime

from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from knowhub_contracts.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KnowledgeView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KNOWLEDGE_VIEW_UNSPECIFIED: _ClassVar[KnowledgeView]
    KNOWLEDGE_VIEW_BASIC: _ClassVar[KnowledgeView]

class KnowledgeOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KNOWLEDGE_ORDER_UNSPECIFIED: _ClassVar[KnowledgeOrder]
    KNOWLEDGE_ORDER_CONFIDENCE: _ClassVar[KnowledgeOrder]

class Selection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SELECTION_UNSPECIFIED: _ClassVar[Selection]
    SELECTION_ROUTED: _ClassVar[Selection]
    SELECTION_RECALL: _ClassVar[Selection]
    SELECTION_DEGRADED: _ClassVar[Selection]
KNOWLEDGE_VIEW_UNSPECIFIED: KnowledgeView
KNOWLEDGE_VIEW_BASIC: KnowledgeView
KNOWLEDGE_ORDER_UNSPECIFIED: KnowledgeOrder
KNOWLEDGE_ORDER_CONFIDENCE: KnowledgeOrder
SELECTION_UNSPECIFIED: Selection
SELECTION_ROUTED: Selection
SELECTION_RECALL: Selection
SELECTION_DEGRADED: Selection

class Knowledge(_message.Message):
    __slots__ = ("id", "message_id", "types", "task", "tags", "scopes", "owner", "content", "resource_ids", "source", "eval", "created_at", "updated_at")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    EVAL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    message_id: str
    types: _containers.RepeatedScalarFieldContainer[str]
    task: str
    tags: _containers.ScalarMap[str, str]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    content: str
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    source: Source
    eval: Eval
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., message_id: _Optional[str] = ..., types: _Optional[_Iterable[str]] = ..., task: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ..., scopes: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., content: _Optional[str] = ..., resource_ids: _Optional[_Iterable[str]] = ..., source: _Optional[_Union[Source, _Mapping]] = ..., eval: _Optional[_Union[Eval, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("name", "category", "urls", "agent_id", "submitted_by", "timestamp", "message_id", "trace_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    URLS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_BY_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    category: str
    urls: _containers.RepeatedScalarFieldContainer[str]
    agent_id: str
    submitted_by: str
    timestamp: _timestamp_pb2.Timestamp
    message_id: str
    trace_id: str
    def __init__(self, name: _Optional[str] = ..., category: _Optional[str] = ..., urls: _Optional[_Iterable[str]] = ..., agent_id: _Optional[str] = ..., submitted_by: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message_id: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class Eval(_message.Message):
    __slots__ = ("score", "helpful", "harmful", "confidence", "helpful_history", "harmful_history")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    HELPFUL_FIELD_NUMBER: _ClassVar[int]
    HARMFUL_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    HELPFUL_HISTORY_FIELD_NUMBER: _ClassVar[int]
    HARMFUL_HISTORY_FIELD_NUMBER: _ClassVar[int]
    score: int
    helpful: int
    harmful: int
    confidence: float
    helpful_history: _containers.RepeatedCompositeFieldContainer[Case]
    harmful_history: _containers.RepeatedCompositeFieldContainer[Case]
    def __init__(self, score: _Optional[int] = ..., helpful: _Optional[int] = ..., harmful: _Optional[int] = ..., confidence: _Optional[float] = ..., helpful_history: _Optional[_Iterable[_Union[Case, _Mapping]]] = ..., harmful_history: _Optional[_Iterable[_Union[Case, _Mapping]]] = ...) -> None: ...

class Case(_message.Message):
    __slots__ = ("task", "outcome", "reason", "trace_id", "timestamp", "query_sequence")
    TASK_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    QUERY_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    task: str
    outcome: str
    reason: str
    trace_id: str
    timestamp: _timestamp_pb2.Timestamp
    query_sequence: int
    def __init__(self, task: _Optional[str] = ..., outcome: _Optional[str] = ..., reason: _Optional[str] = ..., trace_id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., query_sequence: _Optional[int] = ...) -> None: ...

class SaveKnowledgeRequest(_message.Message):
    __slots__ = ("task", "content", "types", "tags", "scopes", "owner", "source", "score", "message_id", "resource_ids", "request_id", "validate_only", "allow_duplicate")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TASK_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    ALLOW_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    task: str
    content: str
    types: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.ScalarMap[str, str]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    source: Source
    score: int
    message_id: str
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    request_id: str
    validate_only: bool
    allow_duplicate: bool
    def __init__(self, task: _Optional[str] = ..., content: _Optional[str] = ..., types: _Optional[_Iterable[str]] = ..., tags: _Optional[_Mapping[str, str]] = ..., scopes: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., source: _Optional[_Union[Source, _Mapping]] = ..., score: _Optional[int] = ..., message_id: _Optional[str] = ..., resource_ids: _Optional[_Iterable[str]] = ..., request_id: _Optional[str] = ..., validate_only: _Optional[bool] = ..., allow_duplicate: _Optional[bool] = ...) -> None: ...

class SaveKnowledgeResponse(_message.Message):
    __slots__ = ("knowledge", "existing")
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    knowledge: Knowledge
    existing: bool
    def __init__(self, knowledge: _Optional[_Union[Knowledge, _Mapping]] = ..., existing: _Optional[bool] = ...) -> None: ...

class BatchSaveKnowledgeRequest(_message.Message):
    __slots__ = ("requests", "view")
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[SaveKnowledgeRequest]
    view: KnowledgeView
    def __init__(self, requests: _Optional[_Iterable[_Union[SaveKnowledgeRequest, _Mapping]]] = ..., view: _Optional[_Union[KnowledgeView, str]] = ...) -> None: ...

class BatchSaveKnowledgeResponse(_message.Message):
    __slots__ = ("knowledge", "existing")
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    knowledge: _containers.RepeatedCompositeFieldContainer[Knowledge]
    existing: _containers.RepeatedScalarFieldContainer[bool]
    def __init__(self, knowledge: _Optional[_Iterable[_Union[Knowledge, _Mapping]]] = ..., existing: _Optional[_Iterable[bool]] = ...) -> None: ...

class GetKnowledgeRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetKnowledgeResponse(_message.Message):
    __slots__ = ("knowledge",)
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    knowledge: Knowledge
    def __init__(self, knowledge: _Optional[_Union[Knowledge, _Mapping]] = ...) -> None: ...

class ListKnowledgeRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "types", "scopes", "order_by")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    ORDER_BY_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    types: _containers.RepeatedScalarFieldContainer[str]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    order_by: KnowledgeOrder
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., types: _Optional[_Iterable[str]] = ..., scopes: _Optional[_Iterable[str]] = ..., order_by: _Optional[_Union[KnowledgeOrder, str]] = ...) -> None: ...

class ListKnowledgeResponse(_message.Message):
    __slots__ = ("knowledge", "next_page_token")
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    knowledge: _containers.RepeatedCompositeFieldContainer[Knowledge]
    next_page_token: str
    def __init__(self, knowledge: _Optional[_Iterable[_Union[Knowledge, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SearchKnowledgeRequest(_message.Message):
    __slots__ = ("query", "top_k", "min_score", "types", "min_relevance")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    query: str
    top_k: int
    min_score: int
    types: _containers.RepeatedScalarFieldContainer[str]
    min_relevance: float
    def __init__(self, query: _Optional[str] = ..., top_k: _Optional[int] = ..., min_score: _Optional[int] = ..., types: _Optional[_Iterable[str]] = ..., min_relevance: _Optional[float] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("knowledge", "quality_score", "relevance", "unavailable_resources", "resources_unverified")
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    QUALITY_SCORE_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_UNVERIFIED_FIELD_NUMBER: _ClassVar[int]
    knowledge: Knowledge
    quality_score: float
    relevance: float
    unavailable_resources: _containers.RepeatedCompositeFieldContainer[UnavailableResource]
    resources_unverified: bool
    def __init__(self, knowledge: _Optional[_Union[Knowledge, _Mapping]] = ..., quality_score: _Optional[float] = ..., relevance: _Optional[float] = ..., unavailable_resources: _Optional[_Iterable[_Union[UnavailableResource, _Mapping]]] = ..., resources_unverified: _Optional[bool] = ...) -> None: ...

class UnavailableResource(_message.Message):
    __slots__ = ("resource_id", "reason")
    class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REASON_UNSPECIFIED: _ClassVar[UnavailableResource.Reason]
        REASON_MISSING: _ClassVar[UnavailableResource.Reason]
        REASON_EXPIRED: _ClassVar[UnavailableResource.Reason]
        REASON_DELETED: _ClassVar[UnavailableResource.Reason]
    REASON_UNSPECIFIED: UnavailableResource.Reason
    REASON_MISSING: UnavailableResource.Reason
    REASON_EXPIRED: UnavailableResource.Reason
    REASON_DELETED: UnavailableResource.Reason
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    reason: UnavailableResource.Reason
    def __init__(self, resource_id: _Optional[str] = ..., reason: _Optional[_Union[UnavailableResource.Reason, str]] = ...) -> None: ...

class SearchKnowledgeResponse(_message.Message):
    __slots__ = ("hits", "routed", "selection")
    HITS_FIELD_NUMBER: _ClassVar[int]
    ROUTED_FIELD_NUMBER: _ClassVar[int]
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    routed: bool
    selection: Selection
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., routed: _Optional[bool] = ..., selection: _Optional[_Union[Selection, str]] = ...) -> None: ...

class AskKnowledgeRequest(_message.Message):
    __slots__ = ("query", "top_k", "min_score", "types", "trace_id", "sequence", "goal_id", "min_relevance")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    GOAL_ID_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    query: str
    top_k: int
    min_score: int
    types: _containers.RepeatedScalarFieldContainer[str]
    trace_id: str
    sequence: int
    goal_id: str
    min_relevance: float
    def __init__(self, query: _Optional[str] = ..., top_k: _Optional[int] = ..., min_score: _Optional[int] = ..., types: _Optional[_Iterable[str]] = ..., trace_id: _Optional[str] = ..., sequence: _Optional[int] = ..., goal_id: _Optional[str] = ..., min_relevance: _Optional[float] = ...) -> None: ...

class AskKnowledgeResponse(_message.Message):
    __slots__ = ("answer", "cited_ids", "hits", "routed", "event_id", "selection")
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    CITED_IDS_FIELD_NUMBER: _ClassVar[int]
    HITS_FIELD_NUMBER: _ClassVar[int]
    ROUTED_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SELECTION_FIELD_NUMBER: _ClassVar[int]
    answer: str
    cited_ids: _containers.RepeatedScalarFieldContainer[str]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    routed: bool
    event_id: str
    selection: Selection
    def __init__(self, answer: _Optional[str] = ..., cited_ids: _Optional[_Iterable[str]] = ..., hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., routed: _Optional[bool] = ..., event_id: _Optional[str] = ..., selection: _Optional[_Union[Selection, str]] = ...) -> None: ...

class UpdateKnowledgeRequest(_message.Message):
    __slots__ = ("id", "add_helpful_case", "add_harmful_case", "update_score", "evolve_feedback", "request_id", "knowledge", "update_mask", "change_note")
    ID_FIELD_NUMBER: _ClassVar[int]
    ADD_HELPFUL_CASE_FIELD_NUMBER: _ClassVar[int]
    ADD_HARMFUL_CASE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_SCORE_FIELD_NUMBER: _ClassVar[int]
    EVOLVE_FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    CHANGE_NOTE_FIELD_NUMBER: _ClassVar[int]
    id: str
    add_helpful_case: Case
    add_harmful_case: Case
    update_score: int
    evolve_feedback: str
    request_id: str
    knowledge: Knowledge
    update_mask: _field_mask_pb2.FieldMask
    change_note: str
    def __init__(self, id: _Optional[str] = ..., add_helpful_case: _Optional[_Union[Case, _Mapping]] = ..., add_harmful_case: _Optional[_Union[Case, _Mapping]] = ..., update_score: _Optional[int] = ..., evolve_feedback: _Optional[str] = ..., request_id: _Optional[str] = ..., knowledge: _Optional[_Union[Knowledge, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., change_note: _Optional[str] = ...) -> None: ...

class UpdateKnowledgeResponse(_message.Message):
    __slots__ = ("knowledge",)
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    knowledge: Knowledge
    def __init__(self, knowledge: _Optional[_Union[Knowledge, _Mapping]] = ...) -> None: ...

class KnowledgeFeedback(_message.Message):
    __slots__ = ("knowledge_id", "is_helpful", "case", "request_id")
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    IS_HELPFUL_FIELD_NUMBER: _ClassVar[int]
    CASE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    knowledge_id: str
    is_helpful: bool
    case: Case
    request_id: str
    def __init__(self, knowledge_id: _Optional[str] = ..., is_helpful: _Optional[bool] = ..., case: _Optional[_Union[Case, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class BatchUpdateKnowledgeRequest(_message.Message):
    __slots__ = ("feedback_list",)
    FEEDBACK_LIST_FIELD_NUMBER: _ClassVar[int]
    feedback_list: _containers.RepeatedCompositeFieldContainer[KnowledgeFeedback]
    def __init__(self, feedback_list: _Optional[_Iterable[_Union[KnowledgeFeedback, _Mapping]]] = ...) -> None: ...

class KnowledgeFeedbackResult(_message.Message):
    __slots__ = ("knowledge_id", "knowledge", "error")
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    knowledge_id: str
    knowledge: Knowledge
    error: _common_pb2.ItemError
    def __init__(self, knowledge_id: _Optional[str] = ..., knowledge: _Optional[_Union[Knowledge, _Mapping]] = ..., error: _Optional[_Union[_common_pb2.ItemError, _Mapping]] = ...) -> None: ...

class BatchUpdateKnowledgeResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[KnowledgeFeedbackResult]
    def __init__(self, results: _Optional[_Iterable[_Union[KnowledgeFeedbackResult, _Mapping]]] = ...) -> None: ...

class DeleteKnowledgeRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteKnowledgeResponse(_message.Message):
    __slots__ = ("purge_time",)
    PURGE_TIME_FIELD_NUMBER: _ClassVar[int]
    purge_time: _timestamp_pb2.Timestamp
    def __init__(self, purge_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class UndeleteKnowledgeRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class UndeleteKnowledgeResponse(_message.Message):
    __slots__ = ("knowledge",)
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    knowledge: Knowledge
    def __init__(self, knowledge: _Optional[_Union[Knowledge, _Mapping]] = ...) -> None: ...

class ForgetKnowledgeSubjectRequest(_message.Message):
    __slots__ = ("subject",)
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    def __init__(self, subject: _Optional[str] = ...) -> None: ...

class ForgetKnowledgeSubjectResponse(_message.Message):
    __slots__ = ("erased",)
    class ErasedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ERASED_FIELD_NUMBER: _ClassVar[int]
    erased: _containers.ScalarMap[str, int]
    def __init__(self, erased: _Optional[_Mapping[str, int]] = ...) -> None: ...

class SlimKnowledgeRequest(_message.Message):
    __slots__ = ("model", "dry_run")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    model: str
    dry_run: bool
    def __init__(self, model: _Optional[str] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class SlimGroup(_message.Message):
    __slots__ = ("kept_id", "removed_ids", "merged_by_llm", "note")
    KEPT_ID_FIELD_NUMBER: _ClassVar[int]
    REMOVED_IDS_FIELD_NUMBER: _ClassVar[int]
    MERGED_BY_LLM_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    kept_id: str
    removed_ids: _containers.RepeatedScalarFieldContainer[str]
    merged_by_llm: bool
    note: str
    def __init__(self, kept_id: _Optional[str] = ..., removed_ids: _Optional[_Iterable[str]] = ..., merged_by_llm: _Optional[bool] = ..., note: _Optional[str] = ...) -> None: ...

class SlimKnowledgeResponse(_message.Message):
    __slots__ = ("groups", "examined", "dry_run")
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    EXAMINED_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    groups: _containers.RepeatedCompositeFieldContainer[SlimGroup]
    examined: int
    dry_run: bool
    def __init__(self, groups: _Optional[_Iterable[_Union[SlimGroup, _Mapping]]] = ..., examined: _Optional[int] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class ListKnowledgeVersionsRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class KnowledgeVersion(_message.Message):
    __slots__ = ("content", "replaced_at", "reason", "feedback", "task", "types", "tags", "scopes", "resource_ids", "changed_by", "changed_fields")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    REPLACED_AT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    content: str
    replaced_at: _timestamp_pb2.Timestamp
    reason: str
    feedback: str
    task: str
    types: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.ScalarMap[str, str]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    changed_by: str
    changed_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, content: _Optional[str] = ..., replaced_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ..., feedback: _Optional[str] = ..., task: _Optional[str] = ..., types: _Optional[_Iterable[str]] = ..., tags: _Optional[_Mapping[str, str]] = ..., scopes: _Optional[_Iterable[str]] = ..., resource_ids: _Optional[_Iterable[str]] = ..., changed_by: _Optional[str] = ..., changed_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class ListKnowledgeVersionsResponse(_message.Message):
    __slots__ = ("versions",)
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[KnowledgeVersion]
    def __init__(self, versions: _Optional[_Iterable[_Union[KnowledgeVersion, _Mapping]]] = ...) -> None: ...
