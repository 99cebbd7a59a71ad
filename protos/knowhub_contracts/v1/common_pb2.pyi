from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class KnowledgeType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KNOWLEDGE_TYPE_UNSPECIFIED: _ClassVar[KnowledgeType]
    KNOWLEDGE_TYPE_USER_PROFILE: _ClassVar[KnowledgeType]
    KNOWLEDGE_TYPE_STRATEGY: _ClassVar[KnowledgeType]
    KNOWLEDGE_TYPE_TOOL: _ClassVar[KnowledgeType]
    KNOWLEDGE_TYPE_USECASE: _ClassVar[KnowledgeType]
    KNOWLEDGE_TYPE_DEFINITION: _ClassVar[KnowledgeType]
    KNOWLEDGE_TYPE_PLAN: _ClassVar[KnowledgeType]
KNOWLEDGE_TYPE_UNSPECIFIED: KnowledgeType
KNOWLEDGE_TYPE_USER_PROFILE: KnowledgeType
KNOWLEDGE_TYPE_STRATEGY: KnowledgeType
KNOWLEDGE_TYPE_TOOL: KnowledgeType
KNOWLEDGE_TYPE_USECASE: KnowledgeType
KNOWLEDGE_TYPE_DEFINITION: KnowledgeType
KNOWLEDGE_TYPE_PLAN: KnowledgeType

class ItemError(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...
