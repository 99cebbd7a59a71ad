"""The console of a local hub (no tokens file) in headless Chromium: it gets the hub's
local token from its gateway and works with none typed in; a page of another origin in
the same browser can neither write through the gateway nor read the token."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowhub_server.common.config import CommonSettings
from knowhub_server.gateway.app import GatewayServer, create_app
from knowhub_server.gateway.overview import HubFacts
from knowhub_server.gateway.translation import SERVICES
from tests.console.console import Console
from tests.dream.support import wait_until
from tests.support.harness import Harness


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Harness, str]]:
    """A hub without a tokens file and its gateway (as `knowhub up` runs them)."""
    hub = Harness(tmp_path_factory.mktemp("local-console") / "data").start()
    app = create_app(dict.fromkeys(SERVICES, hub.address), 30.0, local_token=hub.local_token,
                     facts=HubFacts.of(CommonSettings(data_dir=hub.data_dir)))
    gateway = GatewayServer(app, "127.0.0.1", 0)
    gateway.start()
    yield hub, gateway.url
    gateway.stop()
    hub.stop()


def evil_page(gateway: str) -> str:
    """A page that tries a CSRF write and to read the local token, and says in its title
    what it got."""
    return f"""<!doctype html><title>waiting</title><script>
const gateway = "{gateway}";
fetch(gateway + "/api/knowledge", {{method: "POST", mode: "no-cors",
  headers: {{"Content-Type": "text/plain"}},
  body: JSON.stringify({{task: "planted", content: "by evil", types: ["tool"]}})}})
  .catch(() => null);
fetch(gateway + "/api/local-token", {{headers: {{"X-KnowHub-Console": "1"}}}})
  .then(r => r.json()).then(d => {{ document.title = "GOT " + d.token; }})
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


def test_the_console_of_a_local_hub_needs_no_token(
        browser: object, local: tuple[Harness, str], artifacts: Path) -> None:
    hub, url = local
    hub.client().knowledge.save(task="local console note", content="seen without a token",
                                types=["tool"])
    console = Console(browser, url, artifacts).open("/knowledge", None)  # type: ignore[arg-type]
    console.wait(".page-knowledge", "local console note")
    assert console.driver.find_element("id", "token-state").text == "local hub (no token needed)"
    assert console.find_all("#sign-in") == []
    console.wait("#ask-off", "KNOWHUB_LLM_BASE_URL")  # no model: Ask says what it needs
    console.screenshot("local-hub-knowledge")
    assert console.errors() == []  # no script or style the CSP refused


def test_a_page_of_another_origin_cannot_use_the_local_hub(
        browser: object, local: tuple[Harness, str], evil_origin: str) -> None:
    hub, _url = local
    before = [k.id for k in hub.client().knowledge.list(limit=100)]
    browser.get(evil_origin)  # type: ignore[attr-defined]
    wait_until(lambda: browser.title != "waiting", 20, "the page's fetches")  # type: ignore[attr-defined]
    assert browser.title == "blocked"  # type: ignore[attr-defined]
    assert [k.id for k in hub.client().knowledge.list(limit=100)] == before
