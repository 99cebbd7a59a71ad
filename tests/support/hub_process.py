"""`knowhub up` in its own process, started as the docs say: in a folder of its own, from
the project's virtualenv, with the data in `./.knowhub` (relative to that folder).

The folder looks like a clone to the docs and examples run in it: `.venv` and `examples`
are links to the project's. The default ports (50051, 8080) are used when they are free,
which they are in CI; on a shared machine where another hub holds them, free ports are
used and `target` / `gateway` say which.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.support.ports import free_port, port_is_free

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PORT, DEFAULT_GATEWAY_PORT = 50051, 8080
START_TIMEOUT = 60.0


def clean_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any KNOWHUB_ or OPENAI_ setting of the
    developer's, plus `extra`."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("KNOWHUB_", "OPENAI_"))
    }
    env.update(extra or {})
    return env


class HubProcess:
    def __init__(
        self,
        folder: Path,
        settings: Mapping[str, str] | None = None,
        *,
        default_ports: bool = True,
    ) -> None:
        """A `knowhub up` in `folder`; on the default ports when `default_ports` and they
        are free (the docs' blocks name them), else on ports the system picks."""
        self.folder = folder
        self.settings = dict(settings or {})
        defaults_free = (
            default_ports and port_is_free(DEFAULT_PORT) and port_is_free(DEFAULT_GATEWAY_PORT)
        )
        self.port = DEFAULT_PORT if defaults_free else free_port()
        self.gateway_port = DEFAULT_GATEWAY_PORT if defaults_free else free_port()
        self.log = folder / "knowhub-up.log"
        # What a user's shell beside the hub has set (e.g. their model's endpoint).
        self.client_settings: dict[str, str] = {}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def on_default_ports(self) -> bool:
        return (self.port, self.gateway_port) == (DEFAULT_PORT, DEFAULT_GATEWAY_PORT)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def gateway(self) -> str:
        return f"127.0.0.1:{self.gateway_port}"

    def client_environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a command run beside the hub: nothing more than a user's
        shell has, unless the hub had to move off the default ports."""
        env = clean_environment({**self.client_settings, **(extra or {})})
        if not self.on_default_ports:
            env.update(KNOWHUB_TARGET=self.target, KNOWHUB_PORT=str(self.port))
        return env

    def start(self) -> HubProcess:
        for link in (".venv", "examples"):
            path = self.folder / link
            if not path.exists():
                path.symlink_to(ROOT / link, target_is_directory=True)
        command = [str(self.folder / ".venv" / "bin" / "knowhub"), "up"]
        if not self.on_default_ports:
            command += ["--port", str(self.port), "--gateway-port", str(self.gateway_port)]
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                command,
                cwd=self.folder,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=clean_environment(self.settings),
            )
        self._wait_serving()
        return self

    def _wait_serving(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        with grpc.insecure_channel(self.target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                if self._process is not None and self._process.poll() is not None:
                    break
                with contextlib.suppress(grpc.RpcError):
                    answer = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if (
                        answer.status == health_pb2.HealthCheckResponse.SERVING
                        and (self.folder / ".knowhub" / "local_token").exists()
                    ):
                        return
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"knowhub up did not start:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None


@contextlib.contextmanager
def running(
    folder: Path, settings: Mapping[str, str] | None = None, *, default_ports: bool = True
) -> Iterator[HubProcess]:
    hub = HubProcess(folder, settings, default_ports=default_ports).start()
    try:
        yield hub
    finally:
        hub.stop()


def run_python(
    hub: HubProcess, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The virtualenv's Python in the hub's folder, as a user runs a script there."""
    return subprocess.run(
        [str(hub.folder / ".venv" / "bin" / "python"), *args],
        cwd=hub.folder,
        env=hub.client_environment(env),
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
