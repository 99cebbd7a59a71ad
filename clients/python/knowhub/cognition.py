"""`kh.cognition`: trace logs, evaluation triggers, evaluations and the review of
extracted knowledge (`CognitionAPI` for `KnowHub`, `AsyncCognitionAPI` for
`AsyncKnowHub`)."""

from knowhub._async.cognition import AsyncCognitionAPI
from knowhub._requests.cognition import (
    KNOWLEDGE_HEADING,
    SOURCE_CONTENT_KEPT,
    knowledge_block,
    payload_message,
)
from knowhub._sync.cognition import CognitionAPI

__all__ = [
    "KNOWLEDGE_HEADING",
    "SOURCE_CONTENT_KEPT",
    "AsyncCognitionAPI",
    "CognitionAPI",
    "knowledge_block",
    "payload_message",
]
