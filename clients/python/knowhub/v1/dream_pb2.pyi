import datetime

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
REQUEST_TYPE_UNSPECIFIED: RequestType
REQUEST_TYPE_GROUP: RequestType
REQUEST_TYPE_PRIVATE: RequestType
ENTITY_TYPE_UNSPECIFIED: EntityType
ENTITY_TYPE_USER: EntityType
ENTITY_TYPE_GROUP: EntityType
SEARCH_MODE_UNSPECIFIED: SearchMode
SEARCH_MODE_TOOL: SearchMode
SEARCH_MODE_AUTO: SearchMode

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
    __slots__ = ("memo", "observations", "context", "force", "scope")
    MEMO_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    memo: str
    observations: _containers.RepeatedScalarFieldContainer[str]
    context: MemoryContext
    force: bool
    scope: str
    def __init__(self, memo: _Optional[str] = ..., observations: _Optional[_Iterable[str]] = ..., context: _Optional[_Union[MemoryContext, _Mapping]] = ..., force: _Optional[bool] = ..., scope: _Optional[str] = ...) -> None: ...

class RememberResponse(_message.Message):
    __slots__ = ("job_id", "enqueued", "memo_recorded", "warnings")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ENQUEUED_FIELD_NUMBER: _ClassVar[int]
    MEMO_RECORDED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    enqueued: bool
    memo_recorded: bool
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_id: _Optional[str] = ..., enqueued: _Optional[bool] = ..., memo_recorded: _Optional[bool] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class Memo(_message.Message):
    __slots__ = ("text", "created_at", "sender_id", "job_id")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SENDER_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    text: str
    created_at: _timestamp_pb2.Timestamp
    sender_id: str
    job_id: str
    def __init__(self, text: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sender_id: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("event_id", "text", "user_id", "group_id", "sender_id", "timestamp", "timestamp_local", "request_type", "perspective", "is_absolute", "schema_version", "scope", "warning", "job_id")
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
    def __init__(self, event_id: _Optional[str] = ..., text: _Optional[str] = ..., user_id: _Optional[str] = ..., group_id: _Optional[str] = ..., sender_id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., timestamp_local: _Optional[str] = ..., request_type: _Optional[str] = ..., perspective: _Optional[str] = ..., is_absolute: _Optional[bool] = ..., schema_version: _Optional[str] = ..., scope: _Optional[str] = ..., warning: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class SearchEventsRequest(_message.Message):
    __slots__ = ("query", "target_user_id", "target_group_id", "top_k", "time_from", "time_to", "mode", "scope")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TARGET_USER_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    TIME_FROM_FIELD_NUMBER: _ClassVar[int]
    TIME_TO_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    query: str
    target_user_id: str
    target_group_id: str
    top_k: int
    time_from: _timestamp_pb2.Timestamp
    time_to: _timestamp_pb2.Timestamp
    mode: SearchMode
    scope: str
    def __init__(self, query: _Optional[str] = ..., target_user_id: _Optional[str] = ..., target_group_id: _Optional[str] = ..., top_k: _Optional[int] = ..., time_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., mode: _Optional[_Union[SearchMode, str]] = ..., scope: _Optional[str] = ...) -> None: ...

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
