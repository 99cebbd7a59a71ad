"""The console of a local hub (no tokens file) in headless Chromium: it signs in with the
one-time link `knowhub up` prints and works with no token typed in, holding neither the
token nor a cookie a script can read; it signs out; a page of another origin in the same
browser (another port of 127.0.0.1, which receives the session cookie too) can neither
write through the gateway nor read from it."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowhub_server.common.base.config import CommonSettings
from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.overview import HubFacts
from knowhub_server.gateway.session import mint_login_code
from knowhub_server.gateway.translation import SERVICES
from tests.console.console import Console
from tests.dream.support import wait_until
from tests.support.harness import Harness


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Harness, str]]:
    """A hub without a tokens file and its gateway (as `knowhub up` runs them)."""
    hub = Harness(tmp_path_factory.mktemp("local-console") / "data").start()
    app = create_app(
        dict.fromkeys(SERVICES, hub.address),
        30.0,
        local_token=hub.local_token,
        facts=HubFacts.of(CommonSettings(data_dir=hub.data_dir)),
    )
    gateway = GatewayServer(app, "127.0.0.1", 0)
    gateway.start()
    yield hub, gateway.url
    gateway.stop()
    hub.stop()


def sign_in(browser: object, hub: Harness, url: str) -> None:
    """Opens the sign-in link as a user would, from `knowhub up`'s output."""
    code = mint_login_code(hub.local_token, 900)
    browser.get(f"{url}/?login={code}")  # type: ignore[attr-defined]
    wait_until(
        lambda: (
            "/console/" in browser.current_url  # type: ignore[attr-defined]
            and "session=" not in browser.current_url
        ),  # type: ignore[attr-defined]
        10,
        "the console to take its session",
    )


def evil_page(gateway: str) -> str:
    """A page that tries a CSRF write and to read through the signed-in session, and says
    in its title what it got."""
    return f"""<!doctype html><title>waiting</title><script>
const gateway = "{gateway}";
fetch(gateway + "/api/knowledge", {{method: "POST", mode: "no-cors", credentials: "include",
  headers: {{"Content-Type": "text/plain"}},
  body: JSON.stringify({{task: "planted", content: "by evil", types: ["tool"]}})}})
  .catch(() => null);
fetch(gateway + "/api/v1/knowledge/ListKnowledge", {{method: "POST", credentials: "include",
  headers: {{"Content-Type": "application/json"}}, body: "{{}}"}})
  .then(r => r.text()).then(d => {{ document.title = "GOT " + d; }})
  .catch(() => {{ document.title = "blocked"; }});
</script>"""


@pytest.fixture
def evil_origin(local: tuple[Harness, str]) -> Iterator[str]:
    """Another origin (another port) serving the evil page."""
    body = evil_page(local[1]).encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_the_console_of_a_local_hub_signs_in_with_its_link(
    browser: object, local: tuple[Harness, str], artifacts: Path
) -> None:
    hub, url = local
    hub.client().knowledge.save(
        task="local console note", content="seen without a token", types=["tool"]
    )
    console = Console(browser, url, artifacts).open("/knowledge", None)  # type: ignore[arg-type]
    screen = console.wait("#local-sign-in", "knowhub console-link")  # not signed in
    assert "knowhub up" in screen.text
    assert console.find_all("#sign-in-token") == []  # a local hub takes no token
    assert console.find_all(".page-knowledge") == []
    console.screenshot("local-hub-sign-in")
    assert console.errors() == []  # nothing was called without a session

    sign_in(browser, hub, url)
    driver = console.driver
    driver.get(f"{url}/console/#/knowledge")
    console.wait(".page-knowledge", "local console note")
    assert driver.find_element("id", "token-state").text == "local hub (signed in with a link)"
    assert console.find_all("#local-sign-in") == []
    console.wait("#ask-off", "KNOWHUB_LLM_BASE_URL")  # no model: Ask says what it needs
    assert hub.local_token not in driver.page_source
    assert "knowhub_session" not in driver.execute_script("return document.cookie")
    assert hub.local_token not in str(driver.execute_script("return {...localStorage}"))
    console.screenshot("local-hub-knowledge")

    driver.get(f"{url}/console/#/overview")  # GET /api/overview with the session
    console.wait(".page-overview", "local (no tokens file")  # the local token is an admin's
    console.screenshot("local-hub-overview")
    assert console.errors() == []  # no script or style the CSP refused, no refused call

    secret = driver.execute_script("return localStorage.getItem('knowhub.console.session')")
    console.click("#sign-out")
    console.wait("#local-sign-in", "knowhub console-link")
    assert console.find_all("#sign-out") == []
    assert driver.execute_script("return localStorage.getItem('knowhub.console.session')") is None
    after = driver.execute_async_script(  # the old secret and cookie: the gateway ended it
        "const done = arguments[1];"
        "fetch('/api/overview', {headers: {'X-KnowHub-Session': arguments[0]}})"
        ".then(r => done(r.status));",
        secret,
    )
    assert after == 401
    console.screenshot("local-hub-signed-out")


def test_a_page_of_another_origin_cannot_use_the_local_hub(
    browser: object, local: tuple[Harness, str], evil_origin: str
) -> None:
    hub, url = local
    sign_in(browser, hub, url)  # the browser holds the session cookie, for 127.0.0.1
    before = [k.id for k in hub.client().knowledge.list(limit=100)]
    browser.get(evil_origin)  # type: ignore[attr-defined]
    wait_until(lambda: browser.title != "waiting", 20, "the page's fetches")  # type: ignore[attr-defined]
    assert browser.title == "blocked"  # type: ignore[attr-defined]
    assert [k.id for k in hub.client().knowledge.list(limit=100)] == before
