"""How the cognition service joins a server: its store, operations and the knowledge
client wired to the runtime."""

from __future__ import annotations

from knowhub_contracts.v1 import cognition_pb2, cognition_pb2_grpc

from knowhub_server.cognition.config import CognitionSettings
from knowhub_server.cognition.evaluations import EvaluationOperations
from knowhub_server.cognition.extractions import ExtractionOperations
from knowhub_server.cognition.knowledge_client import KnowledgeClient
from knowhub_server.cognition.operations import LogOperations, TraceAccess, TriggerOperations
from knowhub_server.cognition.servicer import CognitionServicer
from knowhub_server.cognition.store import CognitionStore
from knowhub_server.common.runtime.admin import SubjectForget
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.runtime.server import ServiceHost, as_grpc_server

SERVICE_NAME = cognition_pb2.DESCRIPTOR.services_by_name["CognitionService"].full_name
# This service's part of the admin's ForgetSubject.
FORGET = SubjectForget(
    "cognition",
    cognition_pb2_grpc.CognitionServiceStub,
    "ForgetCognitionSubject",
    cognition_pb2.ForgetCognitionSubjectRequest,
)


def register(server: ServiceHost, runtime: Runtime) -> str:
    """Adds the cognition service to `server`; returns its full service name."""
    settings = CognitionSettings()
    store = CognitionStore(runtime.redis, runtime.settings.redis_prefix, runtime.redis_wait)
    runtime.watch_streams(store.triggers_key)
    access = TraceAccess(store, settings)
    knowledge = KnowledgeClient(runtime.peers)
    servicer = CognitionServicer(
        runtime,
        LogOperations(access, knowledge),
        TriggerOperations(access),
        EvaluationOperations(
            access,
            knowledge,
            runtime.authenticator.delegations,
            runtime.metrics,
            runtime.settings.language,
        ),
        ExtractionOperations(access, knowledge),
    )
    cognition_pb2_grpc.add_CognitionServiceServicer_to_server(servicer, as_grpc_server(server))
    return SERVICE_NAME
