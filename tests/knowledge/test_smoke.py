from tests.support.harness import Harness


def test_alice_saves_and_finds_her_knowledge(hub: Harness) -> None:
    alice = hub.client("alice")
    saved = alice.knowledge.save(
        task="log in with selenium", content="use undetected_chromedriver", types=["tool"]
    )
    hits = alice.knowledge.search("selenium login")
    assert [h.knowledge.id for h in hits] == [saved.id]
