"""What a KnowHub process opens once and its services share."""

from __future__ import annotations

from dataclasses import dataclass

from services.common.auth import Authenticator, load_authenticator
from services.common.config import CommonSettings
from services.common.edge_store import EdgeStore
from services.common.embedding import DenseEmbedder
from services.common.llm import LLM
from services.common.qdrant_store import RemoteStore
from services.common.vectors import VectorStore


def open_vector_store(settings: CommonSettings) -> VectorStore:
    """A Qdrant server when KNOWHUB_QDRANT_URL is set, else embedded Edge shards."""
    if settings.qdrant_url:
        return RemoteStore.connect(settings.qdrant_url, settings.qdrant_api_key)
    return EdgeStore(settings.data_dir / "qdrant")


@dataclass
class Runtime:
    settings: CommonSettings
    authenticator: Authenticator
    vectors: VectorStore
    llm: LLM | None
    embedder: DenseEmbedder | None

    @classmethod
    def open(cls, settings: CommonSettings) -> Runtime:
        authenticator = load_authenticator(settings.tokens_file, settings.host)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return cls(
            settings=settings,
            authenticator=authenticator,
            vectors=open_vector_store(settings),
            llm=LLM.from_settings(settings),
            embedder=DenseEmbedder.from_settings(settings),
        )

    def close(self) -> None:
        self.vectors.close()
        if self.llm is not None:
            self.llm.close()
        if self.embedder is not None:
            self.embedder.close()
