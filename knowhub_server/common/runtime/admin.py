"""The admin service: operations on the whole server process (its backup), for admins."""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from knowhub_contracts.v1 import admin_pb2, admin_pb2_grpc

from knowhub_server.common.base.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from knowhub_server.common.runtime.peers import call_as
from knowhub_server.common.runtime.rpc import Live, server_streaming, unary
from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.common.security.auth import Authenticator, Principal
from knowhub_server.common.security.forget import forget_subject
from knowhub_server.common.storage.backup import (
    LOCAL_TOKEN,
    BackupError,
    HubStores,
    check_destination,
    write_backup,
)

log = logging.getLogger(__name__)

SERVICE_NAME = "knowhub.v1.AdminService"
FORGET_TIMEOUT_SECONDS = 600.0  # a service erasing a subject with much data takes a while


@dataclass(frozen=True)
class SubjectForget:
    """A service's part of ForgetSubject: the service (the name Peers reaches it by), its
    stub, and its forget RPC with that RPC's request message, which takes the subject."""

    service: str
    stub: Callable[[grpc.Channel], Any]
    method: str
    request: Callable[..., Any]


class AdminServicer(admin_pb2_grpc.AdminServiceServicer):
    """`forgets`: every service's part of ForgetSubject, in the order it calls them (those
    of services in other processes too)."""

    def __init__(self, runtime: Runtime, forgets: Sequence[SubjectForget]) -> None:
        self.authenticator: Authenticator = runtime.authenticator
        self.stopping = runtime.stopping
        self._runtime = runtime
        self._forgets = tuple(forgets)
        self._backing_up = threading.Lock()  # one backup at a time

    @server_streaming
    def CreateBackup(
        self, request: admin_pb2.CreateBackupRequest, principal: Principal, live: Live
    ) -> Iterator[admin_pb2.CreateBackupResponse]:
        if not principal.is_admin:
            raise PermissionDenied("CreateBackup needs the admin role")
        destination = Path(request.destination)
        try:
            check_destination(destination)
        except BackupError as exc:
            raise InvalidArgument("destination", str(exc)) from None
        if not self._backing_up.acquire(blocking=False):
            raise FailedPrecondition("another backup of this server is running")
        try:
            yield from self._backup(destination)
        finally:
            self._backing_up.release()

    @unary
    def ForgetSubject(
        self, request: admin_pb2.ForgetSubjectRequest, principal: Principal
    ) -> admin_pb2.ForgetSubjectResponse:
        """Each service's forget, through its contract, as the caller: each checks the
        caller may forget the subject, so a refusal here is the services' own."""
        forget_subject(principal, request.subject)
        erased = []
        for forget in self._forgets:
            rpc = getattr(forget.stub(self._runtime.peers.channel(forget.service)), forget.method)
            response = call_as(
                principal,
                rpc,
                forget.request(subject=request.subject),
                timeout=FORGET_TIMEOUT_SECONDS,
            )
            erased.append(
                admin_pb2.ServiceErasure(service=forget.service, erased=dict(response.erased))
            )
        log.info(
            "forgot %s for %s: %s",
            request.subject,
            principal.user_scope,
            {e.service: dict(e.erased) for e in erased},
        )
        return admin_pb2.ForgetSubjectResponse(services=erased)

    def _backup(self, destination: Path) -> Iterator[admin_pb2.CreateBackupResponse]:
        """Runs the backup in a thread of its own and streams its progress."""
        steps: queue.Queue[admin_pb2.BackupProgress | None] = queue.Queue()  # None: done
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                outcome["manifest"] = write_backup(
                    self._stores(),
                    destination,
                    lambda stage, done, total: steps.put(
                        admin_pb2.BackupProgress(stage=stage, done=done, total=total)
                    ),
                )
            except (BackupError, OSError) as exc:
                outcome["error"] = exc
            finally:
                steps.put(None)

        threading.Thread(target=run, name="knowhub-backup", daemon=True).start()
        while (step := steps.get()) is not None:
            yield admin_pb2.CreateBackupResponse(progress=step)
        if "error" in outcome:
            raise FailedPrecondition(f"the backup failed: {outcome['error']}")
        yield admin_pb2.CreateBackupResponse(
            backup=admin_pb2.Backup(
                destination=str(destination), manifest_json=_json(outcome["manifest"])
            )
        )

    def _stores(self) -> HubStores:
        runtime = self._runtime
        settings = runtime.settings
        return HubStores(
            collections=runtime.vectors.opened(),
            gate=runtime.vectors.gate,
            redis=runtime.redis() if runtime.redis_may_hold_data else None,
            redis_prefix=settings.redis_prefix,
            files={LOCAL_TOKEN: settings.data_dir / LOCAL_TOKEN, **runtime.backup_files},
        )


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def register(server: Any, runtime: Runtime, forgets: Sequence[SubjectForget]) -> str:
    """Adds the admin service to `server`; returns its full service name."""
    admin_pb2_grpc.add_AdminServiceServicer_to_server(AdminServicer(runtime, forgets), server)
    return SERVICE_NAME
