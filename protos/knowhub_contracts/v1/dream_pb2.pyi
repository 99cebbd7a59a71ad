import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RequestType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REQUEST_TYPE_UNSPECIFIED: _ClassVar[RequestType]
    REQUEST_TYPE_GROUP: _ClassVar[RequestType]
    REQUEST_TYPE_PRIVATE: _ClassVar[RequestType]

class EntityType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ENTITY_TYPE_UNSPECIFIED: _ClassVar[EntityType]
    ENTITY_TYPE_USER: _ClassVar[EntityType]
    ENTITY_TYPE_GROUP: _ClassVar[EntityType]

class SearchMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_MODE_UNSPECIFIED: _ClassVar[SearchMode]
    SEARCH_MODE_TOOL: _ClassVar[SearchMode]
    SEARCH_MODE_AUTO: _ClassVar[SearchMode]

class EventState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_STATE_UNSPECIFIED: _ClassVar[EventState]
    EVENT_STATE_CURRENT: _ClassVar[EventState]
    EVENT_STATE_SUPERSEDED: _ClassVar[EventState]
    EVENT_STATE_DELETED: _ClassVar[EventState]

class MemoryJobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_JOB_STATE_UNSPECIFIED: _ClassVar[MemoryJobState]
    MEMORY_JOB_STATE_PENDING: _ClassVar[MemoryJobState]
    MEMORY_JOB_STATE_PROCESSING: _ClassVar[MemoryJobState]
    MEMORY_JOB_STATE_DONE: _ClassVar[MemoryJobState]
    MEMORY_JOB_STATE_FAILED: _ClassVar[MemoryJobState]

class MemoryAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_ACTION_UNSPECIFIED: _ClassVar[MemoryAction]
    MEMORY_ACTION_ADD: _ClassVar[MemoryAction]
    MEMORY_ACTION_UPDATE: _ClassVar[MemoryAction]
    MEMORY_ACTION_DELETE: _ClassVar[MemoryAction]
    MEMORY_ACTION_NOOP: _ClassVar[MemoryAction]

class DreamPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DREAM_PHASE_UNSPECIFIED: _ClassVar[DreamPhase]
    DREAM_PHASE_PER_TRACE_REFLECT: _ClassVar[DreamPhase]
    DREAM_PHASE_CROSS_TRACE_INTEGRATE: _ClassVar[DreamPhase]

class DreamRunStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DREAM_RUN_STATUS_UNSPECIFIED: _ClassVar[DreamRunStatus]
    DREAM_RUN_STATUS_QUEUED: _ClassVar[DreamRunStatus]
    DREAM_RUN_STATUS_RUNNING: _ClassVar[DreamRunStatus]
    DREAM_RUN_STATUS_DONE: _ClassVar[DreamRunStatus]
    DREAM_RUN_STATUS_SKIPPED: _ClassVar[DreamRunStatus]
    DREAM_RUN_STATUS_FAILED: _ClassVar[DreamRunStatus]

class DocumentWriteMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_WRITE_MODE_UNSPECIFIED: _ClassVar[DocumentWriteMode]
    DOCUMENT_WRITE_MODE_REPLACE: _ClassVar[DocumentWriteMode]
    DOCUMENT_WRITE_MODE_APPEND: _ClassVar[DocumentWriteMode]
REQUEST_TYPE_UNSPECIFIED: RequestType
REQUEST_TYPE_GROUP: RequestType
REQUEST_TYPE_PRIVATE: RequestType
ENTITY_TYPE_UNSPECIFIED: EntityType
ENTITY_TYPE_USER: EntityType
ENTITY_TYPE_GROUP: EntityType
SEARCH_MODE_UNSPECIFIED: SearchMode
SEARCH_MODE_TOOL: SearchMode
SEARCH_MODE_AUTO: SearchMode
EVENT_STATE_UNSPECIFIED: EventState
EVENT_STATE_CURRENT: EventState
EVENT_STATE_SUPERSEDED: EventState
EVENT_STATE_DELETED: EventState
MEMORY_JOB_STATE_UNSPECIFIED: MemoryJobState
MEMORY_JOB_STATE_PENDING: MemoryJobState
MEMORY_JOB_STATE_PROCESSING: MemoryJobState
MEMORY_JOB_STATE_DONE: MemoryJobState
MEMORY_JOB_STATE_FAILED: MemoryJobState
MEMORY_ACTION_UNSPECIFIED: MemoryAction
MEMORY_ACTION_ADD: MemoryAction
MEMORY_ACTION_UPDATE: MemoryAction
MEMORY_ACTION_DELETE: MemoryAction
MEMORY_ACTION_NOOP: MemoryAction
DREAM_PHASE_UNSPECIFIED: DreamPhase
DREAM_PHASE_PER_TRACE_REFLECT: DreamPhase
DREAM_PHASE_CROSS_TRACE_INTEGRATE: DreamPhase
DREAM_RUN_STATUS_UNSPECIFIED: DreamRunStatus
DREAM_RUN_STATUS_QUEUED: DreamRunStatus
DREAM_RUN_STATUS_RUNNING: DreamRunStatus
DREAM_RUN_STATUS_DONE: DreamRunStatus
DREAM_RUN_STATUS_SKIPPED: DreamRunStatus
DREAM_RUN_STATUS_FAILED: DreamRunStatus
DOCUMENT_WRITE_MODE_UNSPECIFIED: DocumentWriteMode
DOCUMENT_WRITE_MODE_REPLACE: DocumentWriteMode
DOCUMENT_WRITE_MODE_APPEND: DocumentWriteMode

class MemoryContext(_message.Message):
    __slots__ = ("user_id", "group_id", "sender_id", "request_type", "source_message", "recent_messages", "sender_name", "group_name", "timestamp")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    SENDER_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RECENT_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SENDER_NAME_FIELD_NUMBER: _ClassVar[int]
    GROUP_NAME_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    group_id: str
    sender_id: str
    request_type: RequestType
    source_message: str
    recent_messages: _containers.RepeatedScalarFieldContainer[str]
    sender_name: str
    group_name: str
    timestamp: _timestamp_pb2.Timestamp
    def __init__(self, user_id: _Optional[str] = ..., group_id: _Optional[str] = ..., sender_id: _Optional[str] = ..., request_type: _Optional[_Union[RequestType, str]] = ..., source_message: _Optional[str] = ..., recent_messages: _Optional[_Iterable[str]] = ..., sender_name: _Optional[str] = ..., group_name: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RememberRequest(_message.Message):
    __slots__ = ("memo", "observations", "context", "force", "scope", "request_id", "wait_timeout")
    MEMO_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    memo: str
    observations: _containers.RepeatedScalarFieldContainer[str]
    context: MemoryContext
    force: bool
    scope: str
    request_id: str
    wait_timeout: _duration_pb2.Duration
    def __init__(self, memo: _Optional[str] = ..., observations: _Optional[_Iterable[str]] = ..., context: _Optional[_Union[MemoryContext, _Mapping]] = ..., force: _Optional[bool] = ..., scope: _Optional[str] = ..., request_id: _Optional[str] = ..., wait_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RememberResponse(_message.Message):
    __slots__ = ("job_id", "enqueued", "memo_recorded", "warnings", "job")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ENQUEUED_FIELD_NUMBER: _ClassVar[int]
    MEMO_RECORDED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    enqueued: bool
    memo_recorded: bool
    warnings: _containers.RepeatedScalarFieldContainer[str]
    job: MemoryJob
    def __init__(self, job_id: _Optional[str] = ..., enqueued: _Optional[bool] = ..., memo_recorded: _Optional[bool] = ..., warnings: _Optional[_Iterable[str]] = ..., job: _Optional[_Union[MemoryJob, _Mapping]] = ...) -> None: ...

class MemoryDecision(_message.Message):
    __slots__ = ("observation_index", "action", "event_id", "target_event_id", "reason")
    OBSERVATION_INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    observation_index: int
    action: MemoryAction
    event_id: str
    target_event_id: str
    reason: str
    def __init__(self, observation_index: _Optional[int] = ..., action: _Optional[_Union[MemoryAction, str]] = ..., event_id: _Optional[str] = ..., target_event_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class MemoryJob(_message.Message):
    __slots__ = ("job_id", "state", "error", "event_ids", "decisions", "deliveries", "created_at", "updated_at", "scope")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    state: MemoryJobState
    error: str
    event_ids: _containers.RepeatedScalarFieldContainer[str]
    decisions: _containers.RepeatedCompositeFieldContainer[MemoryDecision]
    deliveries: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    scope: str
    def __init__(self, job_id: _Optional[str] = ..., state: _Optional[_Union[MemoryJobState, str]] = ..., error: _Optional[str] = ..., event_ids: _Optional[_Iterable[str]] = ..., decisions: _Optional[_Iterable[_Union[MemoryDecision, _Mapping]]] = ..., deliveries: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., scope: _Optional[str] = ...) -> None: ...

class GetMemoryJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class GetMemoryJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: MemoryJob
    def __init__(self, job: _Optional[_Union[MemoryJob, _Mapping]] = ...) -> None: ...

class Memo(_message.Message):
    __slots__ = ("text", "created_at", "sender_id", "job_id", "edited_at")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SENDER_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    EDITED_AT_FIELD_NUMBER: _ClassVar[int]
    text: str
    created_at: _timestamp_pb2.Timestamp
    sender_id: str
    job_id: str
    edited_at: _timestamp_pb2.Timestamp
    def __init__(self, text: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sender_id: _Optional[str] = ..., job_id: _Optional[str] = ..., edited_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecentMemosRequest(_message.Message):
    __slots__ = ("request_type", "user_id", "group_id", "limit", "scope")
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    request_type: RequestType
    user_id: str
    group_id: str
    limit: int
    scope: str
    def __init__(self, request_type: _Optional[_Union[RequestType, str]] = ..., user_id: _Optional[str] = ..., group_id: _Optional[str] = ..., limit: _Optional[int] = ..., scope: _Optional[str] = ...) -> None: ...

class RecentMemosResponse(_message.Message):
    __slots__ = ("memos",)
    MEMOS_FIELD_NUMBER: _ClassVar[int]
    memos: _containers.RepeatedCompositeFieldContainer[Memo]
    def __init__(self, memos: _Optional[_Iterable[_Union[Memo, _Mapping]]] = ...) -> None: ...

class CognitiveEvent(_message.Message):
    __slots__ = ("event_id", "text", "user_id", "group_id", "sender_id", "timestamp", "timestamp_local", "request_type", "perspective", "is_absolute", "schema_version", "scope", "warning", "job_id", "state", "superseded_at", "superseded_by", "supersedes", "deleted_at", "purge_at", "edited_at", "confirmed_at")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    SENDER_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_LOCAL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    PERSPECTIVE_FIELD_NUMBER: _ClassVar[int]
    IS_ABSOLUTE_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    WARNING_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_AT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    PURGE_AT_FIELD_NUMBER: _ClassVar[int]
    EDITED_AT_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_AT_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    text: str
    user_id: str
    group_id: str
    sender_id: str
    timestamp: _timestamp_pb2.Timestamp
    timestamp_local: str
    request_type: str
    perspective: str
    is_absolute: bool
    schema_version: str
    scope: str
    warning: str
    job_id: str
    state: EventState
    superseded_at: _timestamp_pb2.Timestamp
    superseded_by: str
    supersedes: str
    deleted_at: _timestamp_pb2.Timestamp
    purge_at: _timestamp_pb2.Timestamp
    edited_at: _timestamp_pb2.Timestamp
    confirmed_at: _timestamp_pb2.Timestamp
    def __init__(self, event_id: _Optional[str] = ..., text: _Optional[str] = ..., user_id: _Optional[str] = ..., group_id: _Optional[str] = ..., sender_id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., timestamp_local: _Optional[str] = ..., request_type: _Optional[str] = ..., perspective: _Optional[str] = ..., is_absolute: _Optional[bool] = ..., schema_version: _Optional[str] = ..., scope: _Optional[str] = ..., warning: _Optional[str] = ..., job_id: _Optional[str] = ..., state: _Optional[_Union[EventState, str]] = ..., superseded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., superseded_by: _Optional[str] = ..., supersedes: _Optional[str] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., purge_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., edited_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., confirmed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SearchEventsRequest(_message.Message):
    __slots__ = ("query", "target_user_id", "target_group_id", "top_k", "time_from", "time_to", "mode", "scope", "include_history")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TARGET_USER_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    TIME_FROM_FIELD_NUMBER: _ClassVar[int]
    TIME_TO_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HISTORY_FIELD_NUMBER: _ClassVar[int]
    query: str
    target_user_id: str
    target_group_id: str
    top_k: int
    time_from: _timestamp_pb2.Timestamp
    time_to: _timestamp_pb2.Timestamp
    mode: SearchMode
    scope: str
    include_history: bool
    def __init__(self, query: _Optional[str] = ..., target_user_id: _Optional[str] = ..., target_group_id: _Optional[str] = ..., top_k: _Optional[int] = ..., time_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., mode: _Optional[_Union[SearchMode, str]] = ..., scope: _Optional[str] = ..., include_history: _Optional[bool] = ...) -> None: ...

class EventHit(_message.Message):
    __slots__ = ("event", "similarity", "score")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    event: CognitiveEvent
    similarity: float
    score: float
    def __init__(self, event: _Optional[_Union[CognitiveEvent, _Mapping]] = ..., similarity: _Optional[float] = ..., score: _Optional[float] = ...) -> None: ...

class SearchEventsResponse(_message.Message):
    __slots__ = ("hits", "warnings")
    HITS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[EventHit]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hits: _Optional[_Iterable[_Union[EventHit, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("target_user_id", "target_group_id", "time_from", "time_to", "scope", "page_size", "page_token", "include_history")
    TARGET_USER_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FROM_FIELD_NUMBER: _ClassVar[int]
    TIME_TO_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HISTORY_FIELD_NUMBER: _ClassVar[int]
    target_user_id: str
    target_group_id: str
    time_from: _timestamp_pb2.Timestamp
    time_to: _timestamp_pb2.Timestamp
    scope: str
    page_size: int
    page_token: str
    include_history: bool
    def __init__(self, target_user_id: _Optional[str] = ..., target_group_id: _Optional[str] = ..., time_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., scope: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_history: _Optional[bool] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[CognitiveEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[CognitiveEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class Profile(_message.Message):
    __slots__ = ("entity_type", "entity_id", "name", "tags", "summary", "markdown", "updated_at", "source_event_id", "revision", "scope", "reason")
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    entity_type: EntityType
    entity_id: str
    name: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    summary: str
    markdown: str
    updated_at: _timestamp_pb2.Timestamp
    source_event_id: str
    revision: int
    scope: str
    reason: str
    def __init__(self, entity_type: _Optional[_Union[EntityType, str]] = ..., entity_id: _Optional[str] = ..., name: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., summary: _Optional[str] = ..., markdown: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source_event_id: _Optional[str] = ..., revision: _Optional[int] = ..., scope: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class GetProfileRequest(_message.Message):
    __slots__ = ("entity_type", "entity_id", "scope")
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    entity_type: EntityType
    entity_id: str
    scope: str
    def __init__(self, entity_type: _Optional[_Union[EntityType, str]] = ..., entity_id: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class GetProfileResponse(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    def __init__(self, profile: _Optional[_Union[Profile, _Mapping]] = ...) -> None: ...

class SearchProfilesRequest(_message.Message):
    __slots__ = ("query", "entity_type", "top_k", "scope")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    query: str
    entity_type: EntityType
    top_k: int
    scope: str
    def __init__(self, query: _Optional[str] = ..., entity_type: _Optional[_Union[EntityType, str]] = ..., top_k: _Optional[int] = ..., scope: _Optional[str] = ...) -> None: ...

class ListProfilesRequest(_message.Message):
    __slots__ = ("entity_type", "scope", "page_size", "page_token")
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entity_type: EntityType
    scope: str
    page_size: int
    page_token: str
    def __init__(self, entity_type: _Optional[_Union[EntityType, str]] = ..., scope: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListProfilesResponse(_message.Message):
    __slots__ = ("profiles", "next_page_token")
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    profiles: _containers.RepeatedCompositeFieldContainer[Profile]
    next_page_token: str
    def __init__(self, profiles: _Optional[_Iterable[_Union[Profile, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ProfileHit(_message.Message):
    __slots__ = ("profile", "score")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    score: float
    def __init__(self, profile: _Optional[_Union[Profile, _Mapping]] = ..., score: _Optional[float] = ...) -> None: ...

class SearchProfilesResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[ProfileHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[ProfileHit, _Mapping]]] = ...) -> None: ...

class ListProfileRevisionsRequest(_message.Message):
    __slots__ = ("entity_type", "entity_id", "scope")
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    entity_type: EntityType
    entity_id: str
    scope: str
    def __init__(self, entity_type: _Optional[_Union[EntityType, str]] = ..., entity_id: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class ProfileRevision(_message.Message):
    __slots__ = ("profile", "replaced_at")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    REPLACED_AT_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    replaced_at: _timestamp_pb2.Timestamp
    def __init__(self, profile: _Optional[_Union[Profile, _Mapping]] = ..., replaced_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListProfileRevisionsResponse(_message.Message):
    __slots__ = ("revisions",)
    REVISIONS_FIELD_NUMBER: _ClassVar[int]
    revisions: _containers.RepeatedCompositeFieldContainer[ProfileRevision]
    def __init__(self, revisions: _Optional[_Iterable[_Union[ProfileRevision, _Mapping]]] = ...) -> None: ...

class RestoreProfileRevisionRequest(_message.Message):
    __slots__ = ("entity_type", "entity_id", "scope", "revision")
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    entity_type: EntityType
    entity_id: str
    scope: str
    revision: int
    def __init__(self, entity_type: _Optional[_Union[EntityType, str]] = ..., entity_id: _Optional[str] = ..., scope: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class RestoreProfileRevisionResponse(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    def __init__(self, profile: _Optional[_Union[Profile, _Mapping]] = ...) -> None: ...

class FailedJob(_message.Message):
    __slots__ = ("job_id", "error", "deliveries", "failed_at", "scope", "request_type", "user_id", "group_id", "memo", "observations")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    FAILED_AT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    MEMO_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    error: str
    deliveries: int
    failed_at: _timestamp_pb2.Timestamp
    scope: str
    request_type: RequestType
    user_id: str
    group_id: str
    memo: str
    observations: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_id: _Optional[str] = ..., error: _Optional[str] = ..., deliveries: _Optional[int] = ..., failed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., scope: _Optional[str] = ..., request_type: _Optional[_Union[RequestType, str]] = ..., user_id: _Optional[str] = ..., group_id: _Optional[str] = ..., memo: _Optional[str] = ..., observations: _Optional[_Iterable[str]] = ...) -> None: ...

class ListFailedJobsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListFailedJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_page_token")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[FailedJob]
    next_page_token: str
    def __init__(self, jobs: _Optional[_Iterable[_Union[FailedJob, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RetryFailedJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class RetryFailedJobResponse(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class GetEventRequest(_message.Message):
    __slots__ = ("event_id", "scope")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    scope: str
    def __init__(self, event_id: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class GetEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: CognitiveEvent
    def __init__(self, event: _Optional[_Union[CognitiveEvent, _Mapping]] = ...) -> None: ...

class UpdateEventRequest(_message.Message):
    __slots__ = ("event_id", "scope", "text")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    scope: str
    text: str
    def __init__(self, event_id: _Optional[str] = ..., scope: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class UpdateEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: CognitiveEvent
    def __init__(self, event: _Optional[_Union[CognitiveEvent, _Mapping]] = ...) -> None: ...

class DeleteEventRequest(_message.Message):
    __slots__ = ("event_id", "scope")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    scope: str
    def __init__(self, event_id: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class DeleteEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: CognitiveEvent
    def __init__(self, event: _Optional[_Union[CognitiveEvent, _Mapping]] = ...) -> None: ...

class UndeleteEventRequest(_message.Message):
    __slots__ = ("event_id", "scope")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    scope: str
    def __init__(self, event_id: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class UndeleteEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: CognitiveEvent
    def __init__(self, event: _Optional[_Union[CognitiveEvent, _Mapping]] = ...) -> None: ...

class UpdateMemoRequest(_message.Message):
    __slots__ = ("request_type", "user_id", "group_id", "scope", "job_id", "text")
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    request_type: RequestType
    user_id: str
    group_id: str
    scope: str
    job_id: str
    text: str
    def __init__(self, request_type: _Optional[_Union[RequestType, str]] = ..., user_id: _Optional[str] = ..., group_id: _Optional[str] = ..., scope: _Optional[str] = ..., job_id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class UpdateMemoResponse(_message.Message):
    __slots__ = ("memo",)
    MEMO_FIELD_NUMBER: _ClassVar[int]
    memo: Memo
    def __init__(self, memo: _Optional[_Union[Memo, _Mapping]] = ...) -> None: ...

class DeleteMemoRequest(_message.Message):
    __slots__ = ("request_type", "user_id", "group_id", "scope", "job_id")
    REQUEST_TYPE_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    request_type: RequestType
    user_id: str
    group_id: str
    scope: str
    job_id: str
    def __init__(self, request_type: _Optional[_Union[RequestType, str]] = ..., user_id: _Optional[str] = ..., group_id: _Optional[str] = ..., scope: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class DeleteMemoResponse(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class UpdateProfileRequest(_message.Message):
    __slots__ = ("entity_type", "entity_id", "scope", "update_mask", "name", "tags", "summary")
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    entity_type: EntityType
    entity_id: str
    scope: str
    update_mask: _field_mask_pb2.FieldMask
    name: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    summary: str
    def __init__(self, entity_type: _Optional[_Union[EntityType, str]] = ..., entity_id: _Optional[str] = ..., scope: _Optional[str] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., name: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., summary: _Optional[str] = ...) -> None: ...

class UpdateProfileResponse(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    def __init__(self, profile: _Optional[_Union[Profile, _Mapping]] = ...) -> None: ...

class DeleteProfileRequest(_message.Message):
    __slots__ = ("entity_type", "entity_id", "scope")
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    entity_type: EntityType
    entity_id: str
    scope: str
    def __init__(self, entity_type: _Optional[_Union[EntityType, str]] = ..., entity_id: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class DeleteProfileResponse(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    def __init__(self, profile: _Optional[_Union[Profile, _Mapping]] = ...) -> None: ...

class DreamRunCounts(_message.Message):
    __slots__ = ("traces_considered", "traces_reflected", "traces_failed", "reflections_written", "reflections_integrated", "reflections_consumed", "documents_created", "documents_updated", "llm_calls")
    TRACES_CONSIDERED_FIELD_NUMBER: _ClassVar[int]
    TRACES_REFLECTED_FIELD_NUMBER: _ClassVar[int]
    TRACES_FAILED_FIELD_NUMBER: _ClassVar[int]
    REFLECTIONS_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    REFLECTIONS_INTEGRATED_FIELD_NUMBER: _ClassVar[int]
    REFLECTIONS_CONSUMED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_CREATED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_UPDATED_FIELD_NUMBER: _ClassVar[int]
    LLM_CALLS_FIELD_NUMBER: _ClassVar[int]
    traces_considered: int
    traces_reflected: int
    traces_failed: int
    reflections_written: int
    reflections_integrated: int
    reflections_consumed: int
    documents_created: int
    documents_updated: int
    llm_calls: int
    def __init__(self, traces_considered: _Optional[int] = ..., traces_reflected: _Optional[int] = ..., traces_failed: _Optional[int] = ..., reflections_written: _Optional[int] = ..., reflections_integrated: _Optional[int] = ..., reflections_consumed: _Optional[int] = ..., documents_created: _Optional[int] = ..., documents_updated: _Optional[int] = ..., llm_calls: _Optional[int] = ...) -> None: ...

class DreamFailure(_message.Message):
    __slots__ = ("phase", "trace_id", "reason")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    phase: DreamPhase
    trace_id: str
    reason: str
    def __init__(self, phase: _Optional[_Union[DreamPhase, str]] = ..., trace_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class DreamRun(_message.Message):
    __slots__ = ("run_id", "agent_id", "trace_ids", "phases", "status", "reason", "counts", "failures", "schedule_id", "requested_by", "created_at", "started_at", "finished_at", "attempts")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_IDS_FIELD_NUMBER: _ClassVar[int]
    PHASES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    agent_id: str
    trace_ids: _containers.RepeatedScalarFieldContainer[str]
    phases: _containers.RepeatedScalarFieldContainer[DreamPhase]
    status: DreamRunStatus
    reason: str
    counts: DreamRunCounts
    failures: _containers.RepeatedCompositeFieldContainer[DreamFailure]
    schedule_id: str
    requested_by: str
    created_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    attempts: int
    def __init__(self, run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., trace_ids: _Optional[_Iterable[str]] = ..., phases: _Optional[_Iterable[_Union[DreamPhase, str]]] = ..., status: _Optional[_Union[DreamRunStatus, str]] = ..., reason: _Optional[str] = ..., counts: _Optional[_Union[DreamRunCounts, _Mapping]] = ..., failures: _Optional[_Iterable[_Union[DreamFailure, _Mapping]]] = ..., schedule_id: _Optional[str] = ..., requested_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempts: _Optional[int] = ...) -> None: ...

class RunDreamRequest(_message.Message):
    __slots__ = ("agent_id", "trace_ids", "phases")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_IDS_FIELD_NUMBER: _ClassVar[int]
    PHASES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    trace_ids: _containers.RepeatedScalarFieldContainer[str]
    phases: _containers.RepeatedScalarFieldContainer[DreamPhase]
    def __init__(self, agent_id: _Optional[str] = ..., trace_ids: _Optional[_Iterable[str]] = ..., phases: _Optional[_Iterable[_Union[DreamPhase, str]]] = ...) -> None: ...

class RunDreamResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: DreamRun
    def __init__(self, run: _Optional[_Union[DreamRun, _Mapping]] = ...) -> None: ...

class GetDreamRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class GetDreamRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: DreamRun
    def __init__(self, run: _Optional[_Union[DreamRun, _Mapping]] = ...) -> None: ...

class ListDreamRunsRequest(_message.Message):
    __slots__ = ("agent_id", "status", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    status: DreamRunStatus
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., status: _Optional[_Union[DreamRunStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListDreamRunsResponse(_message.Message):
    __slots__ = ("runs", "next_page_token")
    RUNS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[DreamRun]
    next_page_token: str
    def __init__(self, runs: _Optional[_Iterable[_Union[DreamRun, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DreamSchedule(_message.Message):
    __slots__ = ("schedule_id", "agent_id", "every_minutes", "cron", "time_zone", "phases", "start_time", "requested_by", "created_at", "next_run_at", "last_fired_at", "last_run_id")
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVERY_MINUTES_FIELD_NUMBER: _ClassVar[int]
    CRON_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    PHASES_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    NEXT_RUN_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_FIRED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    agent_id: str
    every_minutes: int
    cron: str
    time_zone: str
    phases: _containers.RepeatedScalarFieldContainer[DreamPhase]
    start_time: _timestamp_pb2.Timestamp
    requested_by: str
    created_at: _timestamp_pb2.Timestamp
    next_run_at: _timestamp_pb2.Timestamp
    last_fired_at: _timestamp_pb2.Timestamp
    last_run_id: str
    def __init__(self, schedule_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., every_minutes: _Optional[int] = ..., cron: _Optional[str] = ..., time_zone: _Optional[str] = ..., phases: _Optional[_Iterable[_Union[DreamPhase, str]]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., requested_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., next_run_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_fired_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_run_id: _Optional[str] = ...) -> None: ...

class ScheduleDreamRequest(_message.Message):
    __slots__ = ("agent_id", "every_minutes", "cron", "time_zone", "phases", "start_time", "allow_duplicate")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVERY_MINUTES_FIELD_NUMBER: _ClassVar[int]
    CRON_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    PHASES_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    ALLOW_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    every_minutes: int
    cron: str
    time_zone: str
    phases: _containers.RepeatedScalarFieldContainer[DreamPhase]
    start_time: _timestamp_pb2.Timestamp
    allow_duplicate: bool
    def __init__(self, agent_id: _Optional[str] = ..., every_minutes: _Optional[int] = ..., cron: _Optional[str] = ..., time_zone: _Optional[str] = ..., phases: _Optional[_Iterable[_Union[DreamPhase, str]]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., allow_duplicate: _Optional[bool] = ...) -> None: ...

class ScheduleDreamResponse(_message.Message):
    __slots__ = ("schedule", "existing")
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    schedule: DreamSchedule
    existing: bool
    def __init__(self, schedule: _Optional[_Union[DreamSchedule, _Mapping]] = ..., existing: _Optional[bool] = ...) -> None: ...

class ForgetDreamSubjectRequest(_message.Message):
    __slots__ = ("subject",)
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    def __init__(self, subject: _Optional[str] = ...) -> None: ...

class ForgetDreamSubjectResponse(_message.Message):
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

class ListSchedulesRequest(_message.Message):
    __slots__ = ("agent_id", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSchedulesResponse(_message.Message):
    __slots__ = ("schedules", "next_page_token")
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    schedules: _containers.RepeatedCompositeFieldContainer[DreamSchedule]
    next_page_token: str
    def __init__(self, schedules: _Optional[_Iterable[_Union[DreamSchedule, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteScheduleRequest(_message.Message):
    __slots__ = ("schedule_id",)
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ...) -> None: ...

class DeleteScheduleResponse(_message.Message):
    __slots__ = ("schedule_id",)
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    schedule_id: str
    def __init__(self, schedule_id: _Optional[str] = ...) -> None: ...

class MemoryDocument(_message.Message):
    __slots__ = ("agent_id", "path", "content", "revision", "updated_at", "run_id", "size", "written_by")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_BY_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    path: str
    content: str
    revision: int
    updated_at: _timestamp_pb2.Timestamp
    run_id: str
    size: int
    written_by: str
    def __init__(self, agent_id: _Optional[str] = ..., path: _Optional[str] = ..., content: _Optional[str] = ..., revision: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., run_id: _Optional[str] = ..., size: _Optional[int] = ..., written_by: _Optional[str] = ...) -> None: ...

class ListMemoryDocumentsRequest(_message.Message):
    __slots__ = ("agent_id", "include_content", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CONTENT_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    include_content: bool
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., include_content: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMemoryDocumentsResponse(_message.Message):
    __slots__ = ("documents", "next_page_token")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[MemoryDocument]
    next_page_token: str
    def __init__(self, documents: _Optional[_Iterable[_Union[MemoryDocument, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetMemoryDocumentRequest(_message.Message):
    __slots__ = ("agent_id", "path", "revision")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    path: str
    revision: int
    def __init__(self, agent_id: _Optional[str] = ..., path: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class MemoryDocumentRevision(_message.Message):
    __slots__ = ("revision", "updated_at", "replaced_at", "run_id")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    REPLACED_AT_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    revision: int
    updated_at: _timestamp_pb2.Timestamp
    replaced_at: _timestamp_pb2.Timestamp
    run_id: str
    def __init__(self, revision: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., replaced_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., run_id: _Optional[str] = ...) -> None: ...

class WriteMemoryDocumentRequest(_message.Message):
    __slots__ = ("agent_id", "path", "content", "mode", "expected_revision")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    path: str
    content: str
    mode: DocumentWriteMode
    expected_revision: int
    def __init__(self, agent_id: _Optional[str] = ..., path: _Optional[str] = ..., content: _Optional[str] = ..., mode: _Optional[_Union[DocumentWriteMode, str]] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class WriteMemoryDocumentResponse(_message.Message):
    __slots__ = ("document",)
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    document: MemoryDocument
    def __init__(self, document: _Optional[_Union[MemoryDocument, _Mapping]] = ...) -> None: ...

class DeleteMemoryDocumentRequest(_message.Message):
    __slots__ = ("agent_id", "path")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    path: str
    def __init__(self, agent_id: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class DeleteMemoryDocumentResponse(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class GetMemoryDocumentResponse(_message.Message):
    __slots__ = ("document", "revisions")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    REVISIONS_FIELD_NUMBER: _ClassVar[int]
    document: MemoryDocument
    revisions: _containers.RepeatedCompositeFieldContainer[MemoryDocumentRevision]
    def __init__(self, document: _Optional[_Union[MemoryDocument, _Mapping]] = ..., revisions: _Optional[_Iterable[_Union[MemoryDocumentRevision, _Mapping]]] = ...) -> None: ...
