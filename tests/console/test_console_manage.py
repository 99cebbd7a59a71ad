"""Managing what the hub holds, in headless Chromium against a real hub with tokens: a
knowledge record edited field by field (only the changed fields sent), its versions, and
a delete undone; a memory event edited, deleted and restored, its superseded history and
its job; and a user forgotten from the Forget page, after which their knowledge and events
are gone (and a user who is no admin is refused forgetting another, the refusal shown)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from knowhub import KnowHub, errors
from selenium.webdriver.common.keys import Keys

from tests.console.console import Console
from tests.console.seed import ConsoleLLM
from tests.dream.support import Queue, decide, private_context, profile_update, wait_until
from tests.support.harness import Harness
from tests.support.openai_stub import OpenAIStub, ToolCalls

T0 = 1_780_000_000.0
DAY = 86_400.0


@pytest.fixture
def console(browser: object, gateway: str, artifacts: Path) -> Iterator[Console]:
    yield Console(browser, gateway, artifacts)  # type: ignore[arg-type]


def client(hub: tuple[Harness, Queue], name: str) -> KnowHub:
    return hub[0].client(name)


def replace_text(element: Any, text: str) -> None:
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(Keys.DELETE)
    element.send_keys(text)


def test_knowledge_is_edited_its_versions_shown_and_a_delete_undone(
    console: Console, hub: tuple[Harness, Queue]
) -> None:
    alice = client(hub, "alice")
    record = alice.knowledge.save(
        "rotate the deploy key",
        "Rotate the deploy key every 90 days.",
        ["tool"],
        tags={"team": "ops"},
    )
    console.open(f"/knowledge/{record.id}", "token-alice")
    console.click("#edit-fields summary")
    form = console.wait("#edit-knowledge")
    console.click('button[type="submit"]', within=form)  # nothing changed: nothing sent
    console.wait("#edit-knowledge .notice", "Nothing changed")
    assert alice.knowledge.versions(record.id) == []

    replace_text(
        console.wait('textarea[name="content"]', within=form),
        "Rotate the deploy key every 30 days.",
    )
    console.wait('textarea[name="tags"]', within=form).send_keys("\nowner: <b>sre</b>")
    console.click('input[name="types"][value="strategy"]', within=form)
    console.wait('input[name="change_note"]', within=form).send_keys("the policy changed")
    console.screenshot("console2-knowledge-edit")
    console.click('button[type="submit"]', within=form)
    console.wait(".record-content", "every 30 days")

    edited = alice.knowledge.get(record.id)
    assert (edited.task, edited.content) == (
        "rotate the deploy key",
        "Rotate the deploy key every 30 days.",
    )
    assert sorted(edited.types) == ["strategy", "tool"]
    assert dict(edited.tags) == {"team": "ops", "owner": "<b>sre</b>"}
    [version] = alice.knowledge.versions(record.id)
    assert sorted(version.changed_fields) == ["content", "tags", "types"]  # only these sent
    assert version.feedback == "the policy changed"
    card = console.wait("#versions .version", "the policy changed")
    assert version.changed_by and f"by {version.changed_by}" in card.text
    fields = console.wait(".version-fields", within=card).text
    assert sorted(fields.split(", ")) == ["content", "tags", "types"]
    assert "UTC" in card.text or "GMT" in card.text  # when, with its zone
    console.wait(".version-content", "every 90 days", within=card)
    console.click("summary", "Its other fields as they were", within=card)
    console.wait(".version-state dd", "tool", within=card)
    console.wait(".panel .tag", "owner: <b>sre</b>")  # markup in a tag stays text
    assert console.find_all("#main b") == []
    console.screenshot("console2-knowledge-versions")

    console.click("button.delete-knowledge")
    console.click("button.delete-knowledge", "click again to confirm")
    notice = console.wait("#knowledge-deleted", "It can be restored until")
    assert "UTC" in notice.text or "GMT" in notice.text
    with pytest.raises(errors.NotFound):
        alice.knowledge.get(record.id)
    console.screenshot("console2-knowledge-deleted")
    console.click("button.undelete-knowledge")
    console.wait(".record-task", "rotate the deploy key")
    assert alice.knowledge.get(record.id).content == "Rotate the deploy key every 30 days."
    assert console.errors() == []


def remember(alice: KnowHub, text: str, at: float, user_id: str) -> str:
    result = alice.memory.remember(
        "", [text], context=private_context(user_id, timestamp=at), wait=20.0
    )
    assert result.job.state == "done", result.job
    return result.job_id


def test_a_memory_event_is_edited_deleted_and_restored_with_its_history_and_job(
    console: Console, hub: tuple[Harness, Queue], console_llm: OpenAIStub
) -> None:
    alice = client(hub, "alice")
    llm = console_llm.responder
    assert isinstance(llm, ConsoleLLM)
    paris = remember(alice, "User 20001 lives in Paris", T0, "20001")
    llm.decisions.append(decide("update", 1, "a new city"))
    berlin = remember(alice, "User 20001 lives in Berlin", T0 + 30 * DAY, "20001")
    old, new = f"{paris}_0_sender", f"{berlin}_0_sender"
    row = f'.memory-event[data-event-id="{new}"]'
    assert alice.memory.get_event(old).superseded_by == new

    console.open("/memory?user=20001", "token-alice")
    current = console.wait(f'.memory-event[data-event-id="{new}"]', "lives in Berlin")
    assert console.find_all(f'.memory-event[data-event-id="{old}"]') == []  # current facts only
    console.click("#events-history")  # show history
    superseded = console.wait(f'.memory-event[data-event-id="{old}"]', "superseded")
    console.click("button.superseded-by", new, within=superseded)
    console.wait(f'#memory-lookup .event-detail[data-event-id="{new}"]', "lives in Berlin")
    console.screenshot("console2-memory-history")

    current = console.wait(f'.memory-event[data-event-id="{new}"]')
    console.click("button.job-link", berlin, within=current)
    job = console.wait(f'#memory-lookup .memory-job[data-job-id="{berlin}"]', "done")
    assert "a new city" in job.text and "update" in job.text
    console.screenshot("console2-memory-job")

    console.click("button.edit-event", within=console.wait(row))
    replace_text(console.wait(f"{row} textarea"), "User 20001 lives in Munich <script>x</script>")
    console.click("button", "Save", within=console.wait(row))
    console.wait(f"{row} .text", "lives in Munich <script>x</script>")
    assert alice.memory.get_event(new).text == "User 20001 lives in Munich <script>x</script>"

    console.click("button.delete-event", within=console.wait(row))
    deleted = console.wait(row, "restorable until")
    assert "UTC" in deleted.text or "GMT" in deleted.text
    assert alice.memory.get_event(new).state == "deleted"
    assert new not in [e.event_id for e in alice.memory.list_events(target_user_id="20001")]
    console.screenshot("console2-memory-deleted")
    console.click("button.undelete-event", within=deleted)
    console.wait(f"{row} button.edit-event")
    assert alice.memory.get_event(new).state == "current"
    assert console.errors() == []


def test_forgetting_a_user_erases_their_knowledge_and_events(
    console: Console, hub: tuple[Harness, Queue]
) -> None:
    alice, carol, admin = (client(hub, name) for name in ("alice", "carol", "admin"))
    kept = alice.knowledge.save("alice keeps this", "Alice's own record.", ["tool"])
    record = carol.knowledge.save("carol's deploy steps", "Carol deploys with make ship.", ["tool"])
    event = remember(carol, "User carol prefers night shifts", T0, "carol")
    assert carol.memory.list_events(target_user_id="carol")

    # Dave is no admin: forgetting alice is refused, as the server says, and nothing goes.
    console.open("/forget", "token-dave")
    console.wait("#forget-subject").send_keys("user:alice")
    console.click("#forget-form button")
    console.click("#forget-confirm")
    console.wait("#forget-result .error", "PERMISSION_DENIED")
    assert alice.knowledge.get(kept.id).task == "alice keeps this"
    console.screenshot("console2-forget-refused")

    console.open("/forget", "token-admin")
    console.wait("#forget-subject").send_keys("user:carol")
    console.click("#forget-form button")
    review = console.wait("#forget-review", "This erases, for user:carol")
    assert "the records it owns" in review.text and "memory events" in review.text
    assert carol.knowledge.get(record.id).task == "carol's deploy steps"  # nothing yet
    console.screenshot("console2-forget-review")
    console.click("#forget-confirm")
    done = console.wait("#forget-done", "Forgot user:carol")
    knowledge = console.wait('tr.erased[data-service="knowledge"][data-kind="knowledge"]')
    assert knowledge.find_element("css selector", ".erased-count").text == "1"
    dream_rows = console.find_all('tr.erased[data-service="dream"]')
    assert (
        sum(
            int(row.find_element("css selector", ".erased-count").text)
            for row in dream_rows
            if "event" in row.get_attribute("data-kind")
        )
        >= 1
    )
    assert "item(s) erased" in done.text
    console.screenshot("console2-forget-done")

    with pytest.raises(errors.NotFound):
        admin.knowledge.get(record.id)
    assert admin.memory.list_events(target_user_id="carol", include_history=True) == []
    with pytest.raises(errors.NotFound):
        admin.memory.get_event(f"{event}_0_sender")
    wait_until(lambda: alice.knowledge.get(kept.id), what="alice's record, kept")
    assert console.errors() == []


def test_a_memo_a_profile_and_a_memory_document_are_edited_and_deleted(
    console: Console, hub: tuple[Harness, Queue], console_llm: OpenAIStub
) -> None:
    alice = client(hub, "alice")
    llm = console_llm.responder
    assert isinstance(llm, ConsoleLLM)
    llm.merges.append(ToolCalls([profile_update("user", "20002", "Likes coffee.", name="Bo")]))
    alice.memory.remember(
        "Deployed build 7", ["User 20002 likes coffee"], context=private_context("20002"), wait=20.0
    )

    console.open("/memory", "token-alice")
    console.wait("#memos-id").send_keys("20002")
    console.click("#memos button", "Show memos")
    memo = console.wait("#memo-list .memo", "Deployed build 7")
    console.click("button.edit-memo", within=memo)
    replace_text(console.wait("#memo-list .memo textarea"), "Deployed build 8")
    console.click("#memo-list .memo button", "Save")
    console.wait("#memo-list .memo", "Deployed build 8")
    assert [m.text for m in alice.memory.recent_memos(user_id="20002")] == ["Deployed build 8"]

    console.click('#profile-results .profile-row[data-entity-id="20002"] button.open-profile')
    console.wait("#profiles .profile", "revision 1")
    console.click("#profile-edit summary")
    replace_text(console.wait('#edit-profile input[name="name"]'), "Bo Li")
    replace_text(console.wait('#edit-profile textarea[name="summary"]'), "Likes coffee, black.")
    console.click("#edit-profile button", "Save profile")
    console.wait("#profiles .profile", "revision 2")
    profile = alice.memory.get_profile("user", "20002")
    assert (profile.name, profile.summary) == ("Bo Li", "Likes coffee, black.")
    console.wait('#profile-results .profile-row[data-entity-id="20002"]', "Bo Li")  # listed anew
    console.screenshot("console2-memory-memo-profile")

    console.click("#memo-list .memo button.delete-memo")
    console.click("#memo-list .memo button.delete-memo", "click again")
    console.wait("#memo-list", "No memos in this conversation")
    assert alice.memory.recent_memos(user_id="20002") == []
    console.click("#profile-edit summary")  # the profile shown again after the save
    console.click("button.delete-profile")
    console.click("button.delete-profile", "click again to confirm")
    console.wait(".profile-deleted", "Deleted the profile of user 20002")
    with pytest.raises(errors.NotFound):
        alice.memory.get_profile("user", "20002")
    wait_until(
        lambda: not console.find_all('.profile-row[data-entity-id="20002"]'),
        what="the deleted profile gone from the list",
    )
    assert console.errors() == []

    doc = '.document[data-path="notes/preferences.md"]'
    console.open("/dream", "token-alice")
    console.click("#documents summary", "New document")
    form = console.wait("#new-document")
    console.wait('input[name="path"]', within=form).send_keys("notes/preferences.md")
    console.wait('textarea[name="content"]', within=form).send_keys(
        "Prefers <em>short</em> replies."
    )
    console.click("button", "Create document", within=form)
    card = console.wait(doc, "revision 1")
    card.find_element("css selector", "summary").click()
    box = console.wait(f"{doc} textarea")
    replace_text(box, "Prefers short replies, in French.")
    console.click(f"{doc} button", "Save document")
    console.wait(doc, "revision 2")
    assert alice.dream.document("notes/preferences.md").content == (
        "Prefers short replies, in French."
    )
    console.screenshot("console2-dream-documents")
    card = console.wait(doc)
    card.find_element("css selector", "summary").click()
    console.click(f"{doc} button.delete-document")
    console.click(f"{doc} button.delete-document", "click again")
    console.wait("#documents", "No memory documents for this agent")
    assert alice.dream.documents() == []
    assert console.errors() == []
