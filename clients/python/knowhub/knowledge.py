"""`kh.knowledge`: the knowledge tools as methods (`KnowledgeAPI` for `KnowHub`,
`AsyncKnowledgeAPI` for `AsyncKnowHub`)."""

from knowhub._async.knowledge import AsyncKnowledgeAPI
from knowhub._requests.knowledge import ORDERS, SLIM_TIMEOUT, save_request
from knowhub._sync.knowledge import KnowledgeAPI

__all__ = ["ORDERS", "SLIM_TIMEOUT", "AsyncKnowledgeAPI", "KnowledgeAPI", "save_request"]
