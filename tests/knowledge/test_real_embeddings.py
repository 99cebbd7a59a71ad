"""The real embedding model the meaning tests rely on: a hub using it finds a record by
what it means when no word is shared."""

from __future__ import annotations

from tests.support.harness import Harness


def test_a_paraphrase_finds_its_record_with_no_word_in_common(minilm_hub: Harness) -> None:
    kh = minilm_hub.client("alice")
    kh.knowledge.save(
        task="Renew the TLS certificate of the web server",
        content="Run certbot renew, then reload nginx.",
        types=["tool"],
    )
    kh.knowledge.save(
        task="Feed the office cat", content="Twice a day, dry food.", types=["usecase"]
    )
    hits = kh.knowledge.search("how do I refresh an expiring https cert", top_k=1)
    assert [h.knowledge.task for h in hits] == ["Renew the TLS certificate of the web server"]
