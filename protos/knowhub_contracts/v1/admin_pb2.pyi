from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ForgetSubjectRequest(_message.Message):
    __slots__ = ("subject",)
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    def __init__(self, subject: _Optional[str] = ...) -> None: ...

class ServiceErasure(_message.Message):
    __slots__ = ("service", "erased")
    class ErasedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    service: str
    erased: _containers.ScalarMap[str, int]
    def __init__(self, service: _Optional[str] = ..., erased: _Optional[_Mapping[str, int]] = ...) -> None: ...

class ForgetSubjectResponse(_message.Message):
    __slots__ = ("services",)
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    services: _containers.RepeatedCompositeFieldContainer[ServiceErasure]
    def __init__(self, services: _Optional[_Iterable[_Union[ServiceErasure, _Mapping]]] = ...) -> None: ...

class CreateBackupRequest(_message.Message):
    __slots__ = ("destination",)
    DESTINATION_FIELD_NUMBER: _ClassVar[int]
    destination: str
    def __init__(self, destination: _Optional[str] = ...) -> None: ...

class CreateBackupResponse(_message.Message):
    __slots__ = ("progress", "backup")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    BACKUP_FIELD_NUMBER: _ClassVar[int]
    progress: BackupProgress
    backup: Backup
    def __init__(self, progress: _Optional[_Union[BackupProgress, _Mapping]] = ..., backup: _Optional[_Union[Backup, _Mapping]] = ...) -> None: ...

class BackupProgress(_message.Message):
    __slots__ = ("stage", "done", "total")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    stage: str
    done: int
    total: int
    def __init__(self, stage: _Optional[str] = ..., done: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class Backup(_message.Message):
    __slots__ = ("destination", "manifest_json")
    DESTINATION_FIELD_NUMBER: _ClassVar[int]
    MANIFEST_JSON_FIELD_NUMBER: _ClassVar[int]
    destination: str
    manifest_json: str
    def __init__(self, destination: _Optional[str] = ..., manifest_json: _Optional[str] = ...) -> None: ...
