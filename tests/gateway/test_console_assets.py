"""The console's vendored JavaScript: as fetched from the npm registry, served by the
gateway."""

from __future__ import annotations

import hashlib

from knowhub_server.gateway.app import CONSOLE_DIR
from tests.gateway.conftest import Gateway


def test_the_vendored_graph_layout_is_served_as_fetched(gateway: Gateway) -> None:
    """dagre as `npm pack` gave it (the checksums scripts/vendor_console_js.sh recorded),
    with its licenses, served as a JavaScript module."""
    vendor = CONSOLE_DIR / "vendor" / "dagre"
    recorded = dict(reversed(line.split("  ")) for line in
                    (vendor / "VERSION").read_text().splitlines() if "  " in line)
    assert set(recorded) == {"dagre.esm.js", "LICENSE", "LICENSE-graphlib"}
    for name, digest in recorded.items():
        assert hashlib.sha256((vendor / name).read_bytes()).hexdigest() == digest, name
    assert "MIT" in (vendor / "VERSION").read_text()
    module = gateway.get("/console/vendor/dagre/dagre.esm.js")
    assert module.status_code == 200 and module.content == (vendor / "dagre.esm.js").read_bytes()
    assert "javascript" in module.headers["content-type"]
