"""The console of a local hub signs in with a one-time link, never with the token: no
route hands the local token out, another account on the machine (which cannot read the
data directory) gets nothing from the gateway, and a session needs its HttpOnly cookie
and its secret together."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from knowhub_server.gateway.session import COOKIE, Sessions, mint_login_code
from tests.gateway.conftest import Gateway

NOBODY = 65534
EVIL = "http://evil.example"


def sign_in(gateway: Gateway, code: str) -> tuple[str, str]:
    """Opens the sign-in link: (the session cookie, the secret from the redirect)."""
    response = gateway.client.get(f"/?login={code}")
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert location.startswith("/console/#session=")
    set_cookie = response.headers["set-cookie"].lower()
    assert "httponly" in set_cookie and "samesite=strict" in set_cookie
    assert "path=/" in set_cookie
    gateway.client.cookies.clear()  # each request below says what it carries
    return response.cookies[COOKIE], location.removeprefix("/console/#session=")


def list_knowledge(gateway: Gateway, cookie: str | None, secret: str | None, **headers: str) -> int:
    if cookie:
        headers["Cookie"] = f"{COOKIE}={cookie}"
    if secret:
        headers["X-KnowHub-Session"] = secret
    return gateway.client.post(
        "/api/v1/knowledge/ListKnowledge", json={}, headers=headers
    ).status_code


def code_for(gateway: Gateway) -> str:
    assert gateway.hub is not None
    return mint_login_code(gateway.hub.local_token, 900)


def test_a_sign_in_link_opens_one_session_once(local_gateway: Gateway) -> None:
    code = code_for(local_gateway)
    cookie, secret = sign_in(local_gateway, code)
    assert list_knowledge(local_gateway, cookie, secret) == 200
    assert local_gateway.client.get(
        "/api/session", headers={"Cookie": f"{COOKIE}={cookie}", "X-KnowHub-Session": secret}
    ).json() == {"local": True, "signed_in": True}
    again = local_gateway.client.get(f"/?login={code}")  # used
    assert again.status_code == 401 and "knowhub console-link" in again.text
    assert COOKIE not in again.headers.get("set-cookie", "")


def test_a_session_needs_its_cookie_and_its_secret(local_gateway: Gateway) -> None:
    """The cookie alone (which a page on another loopback port would receive) or the
    secret alone opens nothing; nor does a page of another origin with both."""
    cookie, secret = sign_in(local_gateway, code_for(local_gateway))
    assert list_knowledge(local_gateway, cookie, None) == 401
    assert list_knowledge(local_gateway, None, secret) == 401
    assert list_knowledge(local_gateway, cookie, "x" + secret[1:]) == 401
    assert list_knowledge(local_gateway, cookie, secret, Origin=EVIL) == 403
    other, _ = sign_in(local_gateway, code_for(local_gateway))
    assert list_knowledge(local_gateway, other, secret) == 401  # secrets are per session


def test_forged_expired_and_foreign_codes_open_nothing(local_gateway: Gateway) -> None:
    assert local_gateway.hub is not None
    token = local_gateway.hub.local_token
    expired = mint_login_code(token, 900, now=time.time() - 1000)
    too_long = mint_login_code(token, 10 * 86400)  # outlives what the gateway allows
    foreign = mint_login_code("another hub's token", 900)
    for code in (expired, too_long, foreign, "", "x" * 54, "%00", code_for(local_gateway)[:-2]):
        response = local_gateway.client.get("/", params={"login": code})
        assert response.status_code == 401, code
        assert "set-cookie" not in response.headers


def test_sign_out_ends_the_session(local_gateway: Gateway) -> None:
    cookie, secret = sign_in(local_gateway, code_for(local_gateway))
    headers = {
        "Cookie": f"{COOKIE}={cookie}",
        "X-KnowHub-Session": secret,
        "Content-Type": "application/json",
    }
    refused = local_gateway.client.delete(
        "/api/session", headers={**headers, "X-KnowHub-Session": "wrong"}
    )
    assert refused.status_code == 401 and list_knowledge(local_gateway, cookie, secret) == 200
    out = local_gateway.client.delete("/api/session", headers=headers)
    assert out.status_code == 200 and "max-age=0" in out.headers["set-cookie"].lower()
    assert list_knowledge(local_gateway, cookie, secret) == 401


def test_the_overview_takes_the_session_as_every_api_route_does(local_gateway: Gateway) -> None:
    cookie, secret = sign_in(local_gateway, code_for(local_gateway))
    both = {"Cookie": f"{COOKIE}={cookie}", "X-KnowHub-Session": secret}
    overview = local_gateway.client.get("/api/overview", headers=both)
    assert overview.status_code == 200, overview.text
    assert overview.json()["counts"]["records"] == {"count": 0, "more": False}
    for partial in ({"Cookie": both["Cookie"]}, {"X-KnowHub-Session": secret}, {}):
        refused = local_gateway.client.get("/api/overview", headers=partial)
        assert refused.status_code == 401, partial
        assert "counts" not in refused.json()


def test_a_gateway_with_tokens_signs_in_with_no_link(gateway: Gateway) -> None:
    assert gateway.get("/api/session").json() == {"local": False, "signed_in": False}
    code = mint_login_code("anything", 900)
    assert gateway.client.get(f"/?login={code}").status_code == 401


def test_sessions_expire() -> None:
    sessions = Sessions("t", login_seconds=60, session_seconds=10)
    cookie, session = sessions.sign_in(mint_login_code("t", 60), now=time.time())
    assert sessions.token(cookie, session.secret) == "t"
    with pytest.raises(Exception, match="unknown or expired"):
        sessions.token(cookie, session.secret, now=time.time() + 11)


ATTACK = """
import json, sys, urllib.request, urllib.error
url, data_dir = sys.argv[1], sys.argv[2]
seen = {}
try:
    seen["file"] = open(data_dir + "/local_token").read()
except OSError as exc:
    seen["file"] = type(exc).__name__
def get(path, method="GET", body=None, **headers):
    request = urllib.request.Request(url + path, method=method, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
seen["local-token"] = get("/api/local-token", **{"X-KnowHub-Console": "1"})
seen["session"] = get("/api/session", **{"X-KnowHub-Console": "1"})
seen["list"] = get("/api/v1/knowledge/ListKnowledge", "POST", b"{}",
                   **{"Content-Type": "application/json", "X-KnowHub-Console": "1"})
seen["openapi"] = get("/openapi.json")
seen["console"] = get("/console/js/api.js")
print(json.dumps(seen))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="runs the attacker as another account (root)")
def test_another_account_gets_no_token_from_the_gateway(local_gateway: Gateway) -> None:
    """The attack as it was run: another account, unable to read the data directory, asks
    the gateway as the console used to (`X-KnowHub-Console: 1`)."""
    assert local_gateway.hub is not None
    token = local_gateway.hub.local_token
    local_gateway.hub.client().knowledge.save(task="private note", content="mine", types=["tool"])
    attacker = subprocess.run(
        [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            ATTACK,
            local_gateway.server.url,
            str(local_gateway.hub.data_dir),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert attacker.returncode == 0, attacker.stderr
    seen = json.loads(attacker.stdout)
    assert seen["file"] == "PermissionError"
    assert token not in attacker.stdout
    assert seen["local-token"][0] == 404
    assert seen["session"] == [
        200,
        json.dumps({"local": True, "signed_in": False}, separators=(",", ":")),
    ]
    assert seen["list"][0] == 401 and "private note" not in attacker.stdout
