import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from knowhub_contracts.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ResourceContentType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESOURCE_CONTENT_TYPE_UNSPECIFIED: _ClassVar[ResourceContentType]
    RESOURCE_CONTENT_TYPE_TEXT: _ClassVar[ResourceContentType]
    RESOURCE_CONTENT_TYPE_CODE: _ClassVar[ResourceContentType]
    RESOURCE_CONTENT_TYPE_CREDENTIAL: _ClassVar[ResourceContentType]
    RESOURCE_CONTENT_TYPE_COOKIE: _ClassVar[ResourceContentType]

class ResourceView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESOURCE_VIEW_UNSPECIFIED: _ClassVar[ResourceView]
    RESOURCE_VIEW_BASIC: _ClassVar[ResourceView]
RESOURCE_CONTENT_TYPE_UNSPECIFIED: ResourceContentType
RESOURCE_CONTENT_TYPE_TEXT: ResourceContentType
RESOURCE_CONTENT_TYPE_CODE: ResourceContentType
RESOURCE_CONTENT_TYPE_CREDENTIAL: ResourceContentType
RESOURCE_CONTENT_TYPE_COOKIE: ResourceContentType
RESOURCE_VIEW_UNSPECIFIED: ResourceView
RESOURCE_VIEW_BASIC: ResourceView

class ForgetResourceSubjectRequest(_message.Message):
    __slots__ = ("subject",)
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    def __init__(self, subject: _Optional[str] = ...) -> None: ...

class ForgetResourceSubjectResponse(_message.Message):
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

class Resource(_message.Message):
    __slots__ = ("id", "title", "body", "secure_body", "content_type", "metadata", "scopes", "owner", "expires_at", "version", "created_at", "updated_at", "expired", "has_secure_body", "deleted", "deleted_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    SECURE_BODY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    HAS_SECURE_BODY_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    body: str
    secure_body: str
    content_type: ResourceContentType
    metadata: _struct_pb2.Struct
    scopes: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    expires_at: _timestamp_pb2.Timestamp
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    expired: bool
    has_secure_body: bool
    deleted: bool
    deleted_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., secure_body: _Optional[str] = ..., content_type: _Optional[_Union[ResourceContentType, str]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., scopes: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expired: _Optional[bool] = ..., has_secure_body: _Optional[bool] = ..., deleted: _Optional[bool] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SaveResourceRequest(_message.Message):
    __slots__ = ("id", "title", "body", "secure_body", "content_type", "metadata", "scopes", "owner", "expires_at", "expected_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    SECURE_BODY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    body: str
    secure_body: str
    content_type: ResourceContentType
    metadata: _struct_pb2.Struct
    scopes: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    expires_at: _timestamp_pb2.Timestamp
    expected_version: int
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., body: _Optional[str] = ..., secure_body: _Optional[str] = ..., content_type: _Optional[_Union[ResourceContentType, str]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., scopes: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expected_version: _Optional[int] = ...) -> None: ...

class SaveResourceResponse(_message.Message):
    __slots__ = ("resource",)
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    resource: Resource
    def __init__(self, resource: _Optional[_Union[Resource, _Mapping]] = ...) -> None: ...

class GetResourceRequest(_message.Message):
    __slots__ = ("id", "include_secure", "version")
    ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SECURE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    include_secure: bool
    version: int
    def __init__(self, id: _Optional[str] = ..., include_secure: _Optional[bool] = ..., version: _Optional[int] = ...) -> None: ...

class GetResourceResponse(_message.Message):
    __slots__ = ("resource",)
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    resource: Resource
    def __init__(self, resource: _Optional[_Union[Resource, _Mapping]] = ...) -> None: ...

class BatchGetResourcesRequest(_message.Message):
    __slots__ = ("ids", "view")
    IDS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    view: ResourceView
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., view: _Optional[_Union[ResourceView, str]] = ...) -> None: ...

class ResourceResult(_message.Message):
    __slots__ = ("id", "resource", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: str
    resource: Resource
    error: _common_pb2.ItemError
    def __init__(self, id: _Optional[str] = ..., resource: _Optional[_Union[Resource, _Mapping]] = ..., error: _Optional[_Union[_common_pb2.ItemError, _Mapping]] = ...) -> None: ...

class BatchGetResourcesResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ResourceResult]
    def __init__(self, results: _Optional[_Iterable[_Union[ResourceResult, _Mapping]]] = ...) -> None: ...

class ListResourcesRequest(_message.Message):
    __slots__ = ("prefix", "content_type", "include_expired", "show_deleted", "page_size", "page_token")
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    SHOW_DELETED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    prefix: str
    content_type: ResourceContentType
    include_expired: bool
    show_deleted: bool
    page_size: int
    page_token: str
    def __init__(self, prefix: _Optional[str] = ..., content_type: _Optional[_Union[ResourceContentType, str]] = ..., include_expired: _Optional[bool] = ..., show_deleted: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListResourcesResponse(_message.Message):
    __slots__ = ("resources", "next_page_token")
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    resources: _containers.RepeatedCompositeFieldContainer[Resource]
    next_page_token: str
    def __init__(self, resources: _Optional[_Iterable[_Union[Resource, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SearchResourcesRequest(_message.Message):
    __slots__ = ("query", "top_k", "content_type", "include_expired")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    query: str
    top_k: int
    content_type: ResourceContentType
    include_expired: bool
    def __init__(self, query: _Optional[str] = ..., top_k: _Optional[int] = ..., content_type: _Optional[_Union[ResourceContentType, str]] = ..., include_expired: _Optional[bool] = ...) -> None: ...

class ResourceHit(_message.Message):
    __slots__ = ("resource", "relevance")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    resource: Resource
    relevance: float
    def __init__(self, resource: _Optional[_Union[Resource, _Mapping]] = ..., relevance: _Optional[float] = ...) -> None: ...

class SearchResourcesResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[ResourceHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[ResourceHit, _Mapping]]] = ...) -> None: ...

class DeleteResourceRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteResourceResponse(_message.Message):
    __slots__ = ("resource",)
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    resource: Resource
    def __init__(self, resource: _Optional[_Union[Resource, _Mapping]] = ...) -> None: ...

class UndeleteResourceRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class UndeleteResourceResponse(_message.Message):
    __slots__ = ("resource",)
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    resource: Resource
    def __init__(self, resource: _Optional[_Union[Resource, _Mapping]] = ...) -> None: ...

class DestroyResourceRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DestroyResourceResponse(_message.Message):
    __slots__ = ("destroyed_versions",)
    DESTROYED_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    destroyed_versions: int
    def __init__(self, destroyed_versions: _Optional[int] = ...) -> None: ...

class ListResourceVersionsRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ResourceVersion(_message.Message):
    __slots__ = ("version", "created_at", "saved_by", "has_secure_body", "deleted", "deleted_at")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SAVED_BY_FIELD_NUMBER: _ClassVar[int]
    HAS_SECURE_BODY_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    version: int
    created_at: _timestamp_pb2.Timestamp
    saved_by: str
    has_secure_body: bool
    deleted: bool
    deleted_at: _timestamp_pb2.Timestamp
    def __init__(self, version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., saved_by: _Optional[str] = ..., has_secure_body: _Optional[bool] = ..., deleted: _Optional[bool] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListResourceVersionsResponse(_message.Message):
    __slots__ = ("versions",)
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[ResourceVersion]
    def __init__(self, versions: _Optional[_Iterable[_Union[ResourceVersion, _Mapping]]] = ...) -> None: ...

class ListAuditEventsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "resource_id")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    resource_id: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., resource_id: _Optional[str] = ...) -> None: ...

class AuditEvent(_message.Message):
    __slots__ = ("id", "time", "actor", "agent_id", "action", "resource_id", "version", "outcome", "detail")
    ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    id: str
    time: _timestamp_pb2.Timestamp
    actor: str
    agent_id: str
    action: str
    resource_id: str
    version: int
    outcome: str
    detail: str
    def __init__(self, id: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., actor: _Optional[str] = ..., agent_id: _Optional[str] = ..., action: _Optional[str] = ..., resource_id: _Optional[str] = ..., version: _Optional[int] = ..., outcome: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class ListAuditEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[AuditEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[AuditEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RotateMasterKeyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RotateMasterKeyResponse(_message.Message):
    __slots__ = ("active_key_id", "created", "rewrapped", "remaining")
    ACTIVE_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    REWRAPPED_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    active_key_id: str
    created: bool
    rewrapped: int
    remaining: int
    def __init__(self, active_key_id: _Optional[str] = ..., created: _Optional[bool] = ..., rewrapped: _Optional[int] = ..., remaining: _Optional[int] = ...) -> None: ...
