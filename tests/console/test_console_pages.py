"""The console's working pages in headless Chromium against a real hub with tokens: the
overview, knowledge created, scored, evolved, asked about and deleted, a secret saved and
read on demand (and refused to whom the server refuses it), memory listed and browsed from
the events to memos and profiles, and signing in and out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from knowhub import KnowHub, errors
from selenium.webdriver.support.ui import Select

from tests.console.console import Console
from tests.console.seed import ANSWER, EVOLVED, SECRET, Seeded
from tests.dream.support import Queue, private_context, wait_until
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub


@pytest.fixture
def console(browser: object, gateway: str, seeded: Seeded, artifacts: Path) -> Iterator[Console]:
    yield Console(browser, gateway, artifacts)  # type: ignore[arg-type]


@pytest.fixture
def alice(hub: tuple[Harness, Queue]) -> KnowHub:
    return hub[0].client("alice")


def count(console: Console, name: str) -> str:
    return console.wait(f'.count[data-count="{name}"] .count-value').text


def test_the_overview_shows_configuration_counts_failures_and_links(
    console: Console, seeded: Seeded, console_llm: OpenAIStub
) -> None:
    console.open("", "token-admin")  # the landing page
    console.wait("#counts")
    assert int(count(console, "records")) >= 1
    assert int(count(console, "traces")) >= 2
    assert int(count(console, "failed_jobs")) == seeded.failed_job_count
    console.wait("#recent-errors", "historian job")
    configuration = console.wait("#configuration", "tokens (KNOWHUB_TOKENS_FILE)")
    assert f"{console_llm.base_url.split('/v1')[0]}" in configuration.text  # the model's host
    assert "off (BM25 only)" in configuration.text
    docs = console.wait("#api-docs-link")
    assert docs.get_attribute("href").endswith("/docs/")
    console.screenshot("overview")
    assert console.errors() == []


def test_knowledge_is_created_scored_evolved_asked_about_and_deleted(
    console: Console, alice: KnowHub
) -> None:
    console.open("/knowledge", "token-alice")
    console.click("#new-knowledge summary")
    form = console.wait("#create-knowledge")
    console.wait('input[name="task"]', within=form).send_keys("restart the console worker")
    console.wait('textarea[name="content"]', within=form).send_keys(
        "Run systemctl restart console-worker and watch its log."
    )
    boxes = {
        box.get_attribute("value"): box
        for box in form.find_elements("css selector", 'input[name="types"]')
    }
    assert set(boxes) == {"user_profile", "strategy", "tool", "usecase", "definition", "plan"}
    boxes["tool"].click()
    boxes["strategy"].click()
    console.screenshot("knowledge-create")
    console.click('button[type="submit"]', within=form)
    title = console.wait(".record-task", "restart the console worker")
    record_id = console.driver.current_url.rsplit("/", 1)[1]
    saved = alice.knowledge.get(record_id)
    assert saved.content == "Run systemctl restart console-worker and watch its log."
    assert sorted(saved.types) == ["strategy", "tool"]
    assert title.is_displayed()

    Select(console.wait('#score-form select[name="score"]')).select_by_value("5")
    console.click("#score-form button")
    wait_until(lambda: alice.knowledge.get(record_id).eval.score == 5, what="the new score")
    console.wait("#evolve-form input").send_keys("say to rotate the login")
    console.click("#evolve-form button")
    console.wait(".record-content", EVOLVED)
    console.wait("#versions .version", "restart console-worker")  # the replaced content
    assert alice.knowledge.get(record_id).content == EVOLVED
    console.screenshot("knowledge-record-edit")
    assert console.errors() == []

    console.click("button.delete-knowledge")
    console.click("button.delete-knowledge", "click again to confirm")
    console.wait("#knowledge-deleted", "It can be restored until")
    with pytest.raises(errors.NotFound):
        alice.knowledge.get(record_id)
    console.click("#knowledge-deleted a", "all knowledge")
    console.wait(".page-knowledge #knowledge-results")

    console.wait("#ask-query").send_keys("how do I log in to staging")
    console.click("button", "Ask")
    answer = console.wait("#ask-answer .answer", ANSWER)
    assert "log in to the staging console" in answer.text  # the cited record, by its task
    console.screenshot("knowledge-ask")
    assert console.errors() == []


def test_a_secret_is_saved_and_read_only_on_demand(console: Console, alice: KnowHub) -> None:
    console.open("/resources", "token-alice")
    console.wait(".resource-row", "Staging console login")
    console.click("#new-resource summary")
    form = console.wait("form.save-resource")
    console.wait('input[name="id"]', within=form).send_keys("creds/console/api")
    console.wait('input[name="title"]', within=form).send_keys("Console API key")
    Select(console.wait("#save-type")).select_by_value("RESOURCE_CONTENT_TYPE_CREDENTIAL")
    console.wait('textarea[name="body"]', within=form).send_keys("the console's API key")
    console.wait('textarea[name="secure_body"]', within=form).send_keys("sk-console-1")
    console.click('button[type="submit"]', within=form)
    console.wait(".resource-title", "Console API key")
    assert "sk-console-1" not in console.page_source()  # not fetched with the page
    console.click(".card.resource button.reveal")
    console.wait(".card.resource .secure-body", "sk-console-1")
    console.click(".card.resource button.hide")
    console.wait(".card.resource .secure-hidden")
    assert "sk-console-1" not in console.page_source()

    form = console.wait("form.save-resource")  # a new version, with a new secret
    console.wait('textarea[name="secure_body"]', within=form).send_keys("sk-console-2")
    console.click('button[type="submit"]', within=form)
    console.wait('.resource-version[data-version="2"]')
    assert alice.resources.get("creds/console/api", include_secure=True).secure_body == (
        "sk-console-2"
    )
    old = console.wait('.resource-version[data-version="1"]')
    console.click("button.reveal", within=old)
    console.wait('.resource-version[data-version="1"] .secure-body', "sk-console-1")
    # Alice is no admin: the audit log is refused, and the page says so.
    console.wait("#audit-log .error", "PERMISSION_DENIED")
    console.screenshot("resource")
    assert [e for e in console.errors() if "ListAuditEvents" not in e] == []

    console.click("button.delete")
    console.wait(".card.resource", "deleted")
    assert alice.resources.get("creds/console/api").deleted


def test_the_audit_log_and_a_refused_secure_read(console: Console, seeded: Seeded) -> None:
    console.open(f"/resources/{seeded.resource_id}", "token-admin")
    console.wait("#audit-log .audit-event")
    console.screenshot("resources-audit-admin")
    console.open(f"/resources/{seeded.resource_id}", "token-carol")  # same org, not owner
    console.click(".card.resource button.reveal")
    console.wait(".card.resource .error", "PERMISSION_DENIED")
    assert SECRET not in console.page_source()
    console.open("/resources", "token-admin")
    console.wait("#audit-log .audit-event", "read_secure")
    console.screenshot("resources")
    assert console.errors() == []


def test_memory_is_browsed_from_events_to_memos_and_profiles(
    console: Console, hub: tuple[Harness, Queue]
) -> None:
    admin = hub[0].client("admin")
    admin.memory.remember("Talked tea with user 10001", context=private_context())
    hub[1].wait_drained()
    console.open("/memory", "token-admin")
    newest = console.wait("#event-results .memory-event")  # listed, newest first, no query
    assert "Talked tea with user 10001" in newest.text
    assert "UTC" in newest.text or "GMT" in newest.text  # the time with its zone
    console.wait("#profile-results .profile-row", "user 10001")  # profiles listed, no query
    console.screenshot("memory-list")

    console.wait("#events-query").send_keys("tea")
    console.wait("#events-user").send_keys("10001")
    console.click("#memory-events button", "Show")
    event = console.wait("#event-results .memory-event", "talked about tea")
    console.click("button.subject", "user 10001", within=event)
    console.wait("#memo-list .memo", "Talked tea with user 10001")
    profile = console.wait("#profiles .profile", "revision 2")
    assert "Likes green tea, no sugar." in profile.text
    console.wait('.revision[data-revision="1"]', "Likes tea.")
    console.screenshot("memory")
    assert console.errors() == []

    console.click("button.restore", "Restore revision 1")
    console.wait("#profiles .profile", "revision 3")
    restored = admin.memory.get_profile("user", "10001")
    assert (restored.revision, restored.summary) == (3, "Likes tea.")

    console.wait("#profile-query").send_keys("tea")
    console.click("#profiles button", "Show")
    console.wait("#profile-results .profile-row", "user 10001")
    assert console.errors() == []


def test_signing_in_with_a_wrong_token_then_a_right_one_and_out(console: Console) -> None:
    console.open("/knowledge", None)
    console.wait("#sign-in", "This hub uses tokens")
    console.screenshot("sign-in")
    console.wait("#sign-in-token").send_keys("not-a-token")
    console.click("#sign-in button")
    refusal = console.wait("#sign-in-error .error", "did not accept this token")
    assert "UNAUTHENTICATED" in refusal.text
    assert "No knowledge visible" not in console.page_text()
    console.screenshot("sign-in-refused")
    stored = console.driver.execute_script("return sessionStorage.getItem('knowhub.console.token')")
    assert stored is None

    console.wait("#sign-in-token").send_keys("token-alice")
    console.click("#sign-in button")
    console.wait(".page-knowledge .knowledge-row")
    assert console.wait("#token-state").text == "signed in with a token"
    assert (
        console.driver.execute_script("return localStorage.getItem('knowhub.console.token')")
        is None
    )  # tab only

    console.click("#sign-out")
    console.wait("#sign-in")
    assert (
        console.driver.execute_script("return sessionStorage.getItem('knowhub.console.token')")
        is None
    )
    assert console.find_all(".knowledge-row") == []
    assert [e for e in console.errors() if "401" not in e] == []  # the refusal's own 401
