"""/docs: Swagger UI, served from the gateway's own vendored copy (no CDN) under its
Content-Security-Policy, renders the OpenAPI document and, on a local hub, calls the API
through the session the console's sign-in link opened."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from knowhub_server.gateway.app import API_DOCS_DIR, GatewayServer, create_app
from knowhub_server.gateway.session import mint_login_code
from knowhub_server.gateway.translation import SERVICES
from tests.dream.support import wait_until
from tests.support.harness import Harness

LIVE = ".live-responses-table tbody"  # the response the page's own call got
# Swagger UI's id of an operation is operations-<tag>-<operationId>.
KNOWLEDGE_LIST = "[id^='operations-'][id$='-knowledge_list']"


@pytest.fixture(scope="module")
def local_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A hub without a tokens file, one record in it, and its gateway: (its URL, a
    sign-in code)."""
    hub = Harness(tmp_path_factory.mktemp("api-docs") / "data").start()
    hub.client().knowledge.save(task="open the api docs", content="at /docs", types=["tool"])
    app = create_app(dict.fromkeys(SERVICES, hub.address), 30.0, local_token=hub.local_token)
    gateway = GatewayServer(app, "127.0.0.1", 0)
    gateway.start()
    yield gateway.url, mint_login_code(hub.local_token, 900)
    gateway.stop()
    hub.stop()


def _refused_by_policy(browser: Any) -> list[str]:
    return [
        entry["message"]
        for entry in browser.get_log("browser")
        if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]
    ]


def test_the_page_loads_only_the_gateways_own_files() -> None:
    page = (API_DOCS_DIR / "index.html").read_text()
    assert "http" not in page.replace("http-equiv", ""), "no asset from another origin"
    version = (API_DOCS_DIR / "vendor" / "swagger-ui" / "VERSION").read_text()
    assert version.startswith("swagger-ui-dist ")
    assert (API_DOCS_DIR / "vendor" / "swagger-ui" / "LICENSE").is_file()


def test_swagger_ui_renders_and_calls_the_api_through_the_session(
    browser: Any, local_gateway: tuple[str, str]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url, code = local_gateway
    browser.get(f"{url}/?login={code}")
    wait_until(
        lambda: "/console/" in browser.current_url and "session=" not in browser.current_url,
        what="the sign-in",
    )
    browser.get(f"{url}/docs")  # redirected to /docs/
    wait_until(
        lambda: browser.find_elements(By.CSS_SELECTOR, KNOWLEDGE_LIST),
        what="the operations to render",
        timeout=30,
    )
    assert "KnowHub REST gateway" in browser.find_element(By.CSS_SELECTOR, ".info .title").text
    operation = browser.find_element(By.CSS_SELECTOR, KNOWLEDGE_LIST)
    operation.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
    wait_until(
        lambda: operation.find_elements(By.CSS_SELECTOR, ".try-out__btn"),
        what="the Try it out button",
    )
    operation.find_element(By.CSS_SELECTOR, ".try-out__btn").click()
    # the document's example lists one team's records; this hub's record is in no team
    scopes = operation.find_element(By.CSS_SELECTOR, "tr[data-param-name='scopes'] input")
    scopes.send_keys(Keys.CONTROL, "a")
    scopes.send_keys(Keys.BACKSPACE)  # as a person would: Swagger UI sees the change
    operation.find_element(By.CSS_SELECTOR, ".execute").click()
    wait_until(
        lambda: operation.find_elements(By.CSS_SELECTOR, ".live-responses-table"),
        what="the live response",
        timeout=30,
    )
    status = operation.find_element(By.CSS_SELECTOR, f"{LIVE} .response-col_status").text
    assert status.strip() == "200", status
    body = operation.find_element(By.CSS_SELECTOR, f"{LIVE} .microlight").text
    assert "open the api docs" in body
    assert _refused_by_policy(browser) == []
