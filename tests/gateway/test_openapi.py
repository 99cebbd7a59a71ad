"""GET /openapi.json describes every route, and the running gateway conforms to it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from knowhub_server.gateway import openapi
from knowhub_server.gateway.app import CONSOLE_DIR
from knowhub_server.gateway.routes import ROUTES
from knowhub_server.gateway.translation import RPCS, to_message
from tests.gateway.conftest import Gateway

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
# Small for CI; the REST gateway guide gives the figures of a larger run.
EXAMPLES_PER_OPERATION = 3


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


def test_the_document_covers_every_route_and_rpc(gateway: Gateway) -> None:
    response = gateway.get("/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    paths = document["paths"]
    for route in ROUTES:
        if "{service}" in route.path:
            continue
        path = route.path.replace("{id:path}", "{id}")
        assert set(route.methods or ()) - {"HEAD"} <= {m.upper() for m in paths[path]}, path
    for (service, method), rpc in RPCS.items():
        operation = paths[f"/api/v1/{service}/{method}"]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body == {"$ref": f"#/components/schemas/{rpc.method.input_type.full_name}"}
        ok = operation["responses"]["200"]["content"]
        if rpc.streaming:
            assert "application/x-ndjson" in ok
        else:
            assert ok["application/json"]["schema"]["$ref"].endswith(
                rpc.method.output_type.full_name
            )
    schemas = document["components"]["schemas"]
    for ref in refs(document):
        assert ref.removeprefix("#/components/schemas/") in schemas, ref
    save = schemas["knowhub.v1.SaveKnowledgeRequest"]["properties"]
    assert save["score"] == {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
    assert save["tags"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert save["source"] == {"$ref": "#/components/schemas/knowhub.v1.Source"}


def test_schemathesis_finds_no_server_error_and_no_nonconforming_answer(
    gateway: Gateway, tmp_path: Path
) -> None:
    """Generated requests (valid and invalid) against every operation but the endless
    WatchTriggers stream, as an admin."""
    result = subprocess.run(
        [
            str(SCHEMATHESIS),
            "run",
            f"{gateway.url}/openapi.json",
            "--header",
            "Authorization: Bearer token-admin",
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,"
            "response_schema_conformance",
            "--phases",
            "examples,fuzzing",
            "--mode",
            "all",
            "--max-examples",
            str(EXAMPLES_PER_OPERATION),
            "--seed",
            "1",
            "--workers",
            "1",
            "--exclude-path-regex",
            "WatchTriggers",
            "--no-shrink",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = result.stdout[-3000:]
    assert result.returncode == 0, summary
    assert " passed" in summary and "failed" not in summary.split("SUMMARY")[-1], summary
    print(json.dumps({"schemathesis": summary.split("Test cases:")[-1].strip()[:200]}))


def test_the_console_is_served_and_home_leads_there(gateway: Gateway) -> None:
    home = gateway.get("/")
    assert (home.status_code, home.headers["location"]) == (302, "/console/")
    bare = gateway.get("/console")
    assert bare.status_code in (301, 307) and bare.headers["location"].endswith("/console/")
    page = gateway.get("/console/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.text == (CONSOLE_DIR / "index.html").read_text()
    assert gateway.get("/console/no-such-file.js").status_code == 404


# Routes without a body or parameters by design.
TAKES_NOTHING = {"GET /api/overview"}


def operations() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in openapi.document()["paths"].items()
        for method, operation in item.items()
    ]


@pytest.mark.parametrize(("route", "operation"), operations(), ids=[r for r, _ in operations()])
def test_every_route_has_schemas_and_an_example_that_the_gateway_takes(
    route: str, operation: dict[str, Any]
) -> None:
    """Swagger UI at /docs/ and the REST reference show each route's parameters and body
    with an example; each example fits the route's schema and parses as the gateway
    parses it."""
    components = openapi.document()["components"]
    parameters = operation.get("parameters", [])
    assert parameters or "requestBody" in operation or route in TAKES_NOTHING, (
        f"{route} takes nothing"
    )
    for parameter in parameters:
        assert parameter["schema"] and parameter["description"], (route, parameter["name"])
        assert "example" in parameter, f"{route}: no example of {parameter['name']}"
        Draft202012Validator(parameter["schema"]).validate(parameter["example"])
    if "requestBody" in operation:
        media = operation["requestBody"]["content"]["application/json"]
        assert "example" in media, f"{route}: no example body (gateway/openapi_examples.py)"
        Draft202012Validator({**media["schema"], "components": components}).validate(
            media["example"]
        )
        service, _, method = operation["operationId"].partition(".")
        if (service, method) in RPCS:
            to_message(media["example"], RPCS[service, method].request_class)
