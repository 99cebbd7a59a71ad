"""The console tests' setup: one hub (every service, the scripted LLM, the test Redis)
seeded through the SDK, the gateway serving the console in front of it, and headless
Chromium driven by Selenium through Debian's chromedriver (no driver download)."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.overview import HubFacts
from knowhub_server.gateway.translation import SERVICES
from tests.console.seed import ConsoleLLM, Seeded, seed
from tests.dream.dreaming import FAST, write_dream_tokens
from tests.dream.support import FAST_HISTORIAN, Queue
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub
from tests.support.shared import running_hub

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
HUB_ENV = {
    **FAST,
    **FAST_HISTORIAN,
    "KNOWHUB_HISTORIAN_WORKERS": "1",
    "KNOWHUB_HISTORIAN_JOB_MAX_RETRIES": "0",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    skip = pytest.mark.skip(
        reason=f"headless Chromium is not installed ({', '.join(missing)} "
        "missing): apt-get install -y chromium chromium-driver"
    )
    for item in items:
        if item.path.parent == Path(__file__).parent:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def console_llm() -> Iterator[OpenAIStub]:
    stub = OpenAIStub().start()
    stub.responder = ConsoleLLM()
    yield stub
    stub.stop()


@pytest.fixture(scope="module")
def hub(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, console_llm: OpenAIStub
) -> Iterator[tuple[Harness, Queue]]:
    directory = tmp_path_factory.mktemp("console")
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    with pytest.MonkeyPatch.context() as env:
        for name, value in HUB_ENV.items():
            env.setenv(name, value)
        with running_hub(
            directory,
            tokens=write_dream_tokens(directory),
            redis_url=redis_url,
            redis_prefix=prefix,
            llm_base_url=console_llm.base_url,
            llm_max_retries=0,
            llm_timeout_seconds=10,
        ) as harness:
            yield harness, Queue(redis_url, prefix)


@pytest.fixture(scope="module")
def seeded(hub: tuple[Harness, Queue], console_llm: OpenAIStub) -> Seeded:
    harness, queue = hub
    assert isinstance(console_llm.responder, ConsoleLLM)
    return seed(harness.client("alice"), console_llm.responder, queue)


@pytest.fixture(scope="module")
def gateway(hub: tuple[Harness, Queue]) -> Iterator[str]:
    """The gateway, serving the console, on a free loopback port; yields its base URL."""
    harness = hub[0]
    settings = CommonSettings(data_dir=harness.data_dir, **harness.settings)
    app = create_app(
        {service: harness.address for service in SERVICES},
        timeout=30.0,
        facts=HubFacts.of(settings),
    )
    server = GatewayServer(app, "127.0.0.1", 0)
    server.start()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1800",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS
