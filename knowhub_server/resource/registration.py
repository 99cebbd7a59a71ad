"""How the resource service joins a server: its store, audit log and master keys wired
to the runtime."""

from __future__ import annotations

from knowhub_contracts.v1 import resource_pb2, resource_pb2_grpc

from knowhub_server.common.runtime.admin import SubjectForget
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.server import ServiceHost, as_grpc_server
from knowhub_server.common.storage.backup import KEY_FILE
from knowhub_server.resource.audit import AuditLog
from knowhub_server.resource.config import ResourceSettings
from knowhub_server.resource.crypto import Keyring, open_keyring
from knowhub_server.resource.operations import ResourceOperations
from knowhub_server.resource.servicer import ResourceServicer
from knowhub_server.resource.store import ResourceStore

SERVICE_NAME = resource_pb2.DESCRIPTOR.services_by_name["ResourceService"].full_name
# This service's part of the admin's ForgetSubject.
FORGET = SubjectForget(
    "resource",
    resource_pb2_grpc.ResourceServiceStub,
    "ForgetResourceSubject",
    resource_pb2.ForgetResourceSubjectRequest,
)


def register(server: ServiceHost, runtime: Runtime) -> str:
    """Adds the resource service to `server`; returns its full service name."""
    settings = ResourceSettings()
    store = ResourceStore(runtime.vectors)
    audit = AuditLog(runtime.redis, runtime.settings.redis_prefix, runtime.redis_wait)
    runtime.watch_streams(audit.stream)
    operations = ResourceOperations(store, keyring(settings, runtime, store), audit, settings)
    resource_pb2_grpc.add_ResourceServiceServicer_to_server(
        ResourceServicer(runtime.authenticator, operations), as_grpc_server(server)
    )
    return SERVICE_NAME


def keyring(settings: ResourceSettings, runtime: Runtime, store: ResourceStore) -> Keyring:
    """The master keys. A key file is created only when this process alone writes the
    store and no secure_body is stored yet: a missing file then means lost keys, not a
    first start."""
    key_file = settings.master_key_file or runtime.settings.data_dir / "keys" / "master-keys.json"
    runtime.backup_files[KEY_FILE] = key_file
    if store.shared:
        why_not = (
            "every replica of a shared Qdrant store must use the same key: set "
            "KNOWHUB_MASTER_KEY (or KNOWHUB_MASTER_KEY_FILE)"
        )
    else:
        why_not = (
            "the resource store already holds encrypted secure_body values: restore "
            "the key file from its backup, or set KNOWHUB_MASTER_KEY"
        )
    return open_keyring(
        master_key=settings.master_key.get_secret_value() if settings.master_key else None,
        retired=settings.master_key_retired.get_secret_value()
        if settings.master_key_retired
        else None,
        key_file=key_file,
        may_create=not store.shared and store.count_encrypted() == 0,
        why_not=why_not,
    )
