"""The console's and the API docs' vendored JavaScript: as fetched from the npm registry,
served by the gateway."""

from __future__ import annotations

import hashlib

from knowhub_server.gateway.app import API_DOCS_DIR, CONSOLE_DIR
from knowhub_server.gateway.guard import CONTENT_SECURITY_POLICY
from tests.gateway.conftest import Gateway


def test_the_vendored_graph_layout_is_served_as_fetched(gateway: Gateway) -> None:
    """dagre as `npm pack` gave it (the checksums scripts/vendor_console_js.sh recorded),
    with its licenses, served as a JavaScript module."""
    vendor = CONSOLE_DIR / "vendor" / "dagre"
    recorded = dict(
        reversed(line.split("  "))
        for line in (vendor / "VERSION").read_text().splitlines()
        if "  " in line
    )
    assert set(recorded) == {"dagre.esm.js", "LICENSE", "LICENSE-graphlib"}
    for name, digest in recorded.items():
        assert hashlib.sha256((vendor / name).read_bytes()).hexdigest() == digest, name
    assert "MIT" in (vendor / "VERSION").read_text()
    module = gateway.get("/console/vendor/dagre/dagre.esm.js")
    assert module.status_code == 200 and module.content == (vendor / "dagre.esm.js").read_bytes()
    assert "javascript" in module.headers["content-type"]


def test_the_api_docs_page_and_its_vendored_swagger_ui_are_served_as_fetched(
    gateway: Gateway,
) -> None:
    """swagger-ui-dist as `npm pack` gave it (the checksums scripts/vendor_swagger_ui.sh
    recorded), with its license and notice; /docs under the gateway's security headers."""
    vendor = API_DOCS_DIR / "vendor" / "swagger-ui"
    recorded = dict(
        reversed(line.split("  "))
        for line in (vendor / "VERSION").read_text().splitlines()
        if "  " in line
    )
    assert set(recorded) == {
        "swagger-ui-bundle.js",
        "swagger-ui.css",
        "LICENSE",
        "NOTICE",
        "swagger-ui-bundle.js.LICENSE.txt",
    }
    for name, digest in recorded.items():
        assert hashlib.sha256((vendor / name).read_bytes()).hexdigest() == digest, name
    assert "Apache-2.0" in (vendor / "VERSION").read_text()
    page = gateway.get("/docs/")
    assert page.status_code == 200 and "swagger-ui-bundle.js" in page.text
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    bundle = gateway.get("/docs/vendor/swagger-ui/swagger-ui-bundle.js")
    assert bundle.status_code == 200
    assert bundle.content == (vendor / "swagger-ui-bundle.js").read_bytes()
    assert "javascript" in bundle.headers["content-type"]
