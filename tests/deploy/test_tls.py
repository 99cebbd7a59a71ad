"""gRPC over TLS: a TLS server answers TLS clients (the SDK, peers, `knowhub health`) that
trust its CA, carries the bearer token, refuses plaintext, and bad files stop the start."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from knowhub import AsyncKnowHub, KnowHub, errors
from knowhub_contracts.v1 import knowledge_pb2, knowledge_pb2_grpc
from pydantic import ValidationError

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.common.base.errors import Unavailable
from knowhub_server.common.runtime.health_probe import check
from knowhub_server.common.runtime.peers import Peers, call_as
from knowhub_server.common.security.auth import TokenRegistry
from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.translation import SERVICES
from tests.conftest import StartHub
from tests.deploy.certs import CertFiles, self_signed
from tests.support.harness import Harness
from tests.test_server import REPO, clean_env


@pytest.fixture
def cert(tmp_path: Path) -> CertFiles:
    return self_signed(tmp_path / "tls")


@pytest.fixture
def tls_hub(start_hub: StartHub, cert: CertFiles) -> Harness:
    return start_hub(tls_cert_file=cert.cert, tls_key_file=cert.key)


def test_a_tls_server_answers_a_tls_client_and_reads_its_token(
    tls_hub: Harness, cert: CertFiles
) -> None:
    with KnowHub(tls_hub.address, token="token-alice", tls_ca=cert.cert, timeout=10) as alice:
        saved = alice.knowledge.save(task="over tls", content="sealed in transit", types=["tool"])
        assert saved.owner == "agent:alice_bot"  # the server read alice's token
        assert alice.knowledge.get(saved.id).content == "sealed in transit"
    with (
        KnowHub(
            tls_hub.address, token="token-bob", tls_ca=cert.cert.read_bytes(), timeout=10
        ) as bob,
        pytest.raises(errors.NotFound),
    ):
        bob.knowledge.get(saved.id)  # bob's own token: another org sees nothing
    with (
        KnowHub(tls_hub.address, token="no-such-token", tls_ca=cert.cert, timeout=10) as stranger,
        pytest.raises(errors.Unauthenticated),
    ):
        stranger.knowledge.get(saved.id)


def test_the_async_client_speaks_tls_too(tls_hub: Harness, cert: CertFiles) -> None:
    async def save_and_get() -> str:
        async with AsyncKnowHub(
            tls_hub.address, token="token-alice", tls_ca=cert.cert, timeout=10
        ) as alice:
            saved = await alice.knowledge.save(task="async tls", content="x", types=["tool"])
            return (await alice.knowledge.get(saved.id)).task

    assert asyncio.run(save_and_get()) == "async tls"


def test_a_plaintext_client_or_an_untrusted_ca_gets_unavailable_saying_so(
    tls_hub: Harness, tmp_path: Path, start_hub: StartHub
) -> None:
    with (
        KnowHub(tls_hub.address, token="token-alice", timeout=5) as plain,
        pytest.raises(errors.Unavailable) as closed,
    ):
        plain.knowledge.list()
    assert closed.value.message.startswith(
        f"the hub at {tls_hub.address} closed the connection: if it serves TLS"
    ), closed.value.message
    stranger = self_signed(tmp_path / "other", "other")
    with (
        KnowHub(tls_hub.address, token="token-alice", tls_ca=stranger.cert, timeout=5) as wrong,
        pytest.raises(errors.Unavailable) as untrusted,
    ):
        wrong.knowledge.list()
    assert untrusted.value.message.startswith(
        f"TLS with {tls_hub.address} failed: the hub "
        "does not speak TLS there, or its certificate "
        "is not signed by the CA given"
    ), untrusted.value.message
    plaintext_hub = start_hub()
    with (
        KnowHub(
            plaintext_hub.address, token="token-alice", tls_ca=stranger.cert, timeout=5
        ) as tls_client,
        pytest.raises(errors.Unavailable) as mismatch,
    ):
        tls_client.knowledge.list()
    assert mismatch.value.message.startswith(f"TLS with {plaintext_hub.address} failed"), (
        mismatch.value.message
    )


def test_an_unreadable_ca_is_named_by_the_client(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"tls_ca: cannot read .*missing\.pem"):
        KnowHub("127.0.0.1:1", tls_ca=tmp_path / "missing.pem")


def test_peers_verify_a_tls_service_with_the_ca_file(
    tls_hub: Harness, cert: CertFiles, tokens_file: Path
) -> None:
    alice = TokenRegistry.from_file(tokens_file).principal_for("token-alice")
    assert alice is not None
    request = knowledge_pb2.SaveKnowledgeRequest(task="from a peer", content="c", types=["tool"])
    trusting = Peers(CommonSettings(knowledge_address=tls_hub.address, tls_ca_file=cert.cert))
    stub = knowledge_pb2_grpc.KnowledgeServiceStub(trusting.channel("knowledge"))
    assert (
        call_as(alice, stub.SaveKnowledge, request, timeout=10).knowledge.owner == "agent:alice_bot"
    )
    trusting.close()
    plaintext = Peers(CommonSettings(knowledge_address=tls_hub.address))
    stub = knowledge_pb2_grpc.KnowledgeServiceStub(plaintext.channel("knowledge"))
    with pytest.raises(Unavailable):
        call_as(
            alice, stub.ListKnowledge, knowledge_pb2.ListKnowledgeRequest(page_size=1), timeout=5
        )
    plaintext.close()


def test_the_health_probe_speaks_tls(tls_hub: Harness, cert: CertFiles) -> None:
    serving, line = check(tls_hub.address, "knowledge", tls_ca=cert.cert.read_bytes())
    assert serving, line
    assert line == f"knowledge at {tls_hub.address}: SERVING"
    serving, line = check(tls_hub.address, "knowledge", timeout=3)
    assert not serving
    assert "unreachable (UNAVAILABLE" in line


def test_bad_tls_files_are_refused_with_the_setting_named(cert: CertFiles, tmp_path: Path) -> None:
    other = self_signed(tmp_path / "other", "other")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    cases = {
        "KNOWHUB_TLS_CERT_FILE: cannot read": dict(
            tls_cert_file=tmp_path / "nope.crt", tls_key_file=cert.key
        ),
        "KNOWHUB_TLS_KEY_FILE: cannot read": dict(
            tls_cert_file=cert.cert, tls_key_file=tmp_path / "nope.key"
        ),
        "go together": dict(tls_cert_file=cert.cert),
        "is not the private key of the certificate": dict(
            tls_cert_file=cert.cert, tls_key_file=other.key
        ),
        "KNOWHUB_TLS_KEY_FILE: .* holds no unencrypted PEM private key": dict(
            tls_cert_file=cert.cert, tls_key_file=garbage
        ),
        "KNOWHUB_TLS_CA_FILE: .* holds no PEM certificate": dict(tls_ca_file=garbage),
    }
    for message, settings in cases.items():
        with pytest.raises(ValidationError, match=message):
            CommonSettings(**settings)


def test_knowhub_serve_with_a_missing_certificate_stops_at_start(
    cert: CertFiles, tmp_path: Path
) -> None:
    env = {
        **clean_env(),
        "KNOWHUB_TLS_CERT_FILE": str(tmp_path / "absent.crt"),
        "KNOWHUB_TLS_KEY_FILE": str(cert.key),
    }
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "knowhub_server.cli",
            "serve",
            "knowledge",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 2
    assert "KNOWHUB_TLS_CERT_FILE: cannot read" in finished.stderr
    assert "absent.crt" in finished.stderr
    assert "listening" not in finished.stdout
    assert not (tmp_path / "data").exists()  # nothing was opened


def test_the_gateway_calls_a_tls_hub_with_the_ca(tls_hub: Harness, cert: CertFiles) -> None:
    targets = dict.fromkeys(SERVICES, tls_hub.address)
    server = GatewayServer(create_app(targets, 10.0, cert.cert.read_bytes()), "127.0.0.1", 0)
    server.start()
    try:
        with httpx.Client(
            base_url=server.url, timeout=10, headers={"Authorization": "Bearer token-alice"}
        ) as http:
            saved = http.post(
                "/api/knowledge", json={"task": "tls via http", "content": "x", "types": ["tool"]}
            )
            assert saved.status_code == 201, saved.text
            found = http.get("/api/knowledge/search", params={"q": "tls via http"}).json()
            assert [hit["id"] for hit in found["results"]] == [saved.json()["id"]]
    finally:
        server.stop()
