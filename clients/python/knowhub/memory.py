"""`kh.memory`: the memory tools as methods (`MemoryAPI` for `KnowHub`, `AsyncMemoryAPI`
for `AsyncKnowHub`)."""

from knowhub._async.memory import AsyncMemoryAPI
from knowhub._requests.memory import auto_inject_query, context_to_proto
from knowhub._sync.memory import MemoryAPI

__all__ = ["AsyncMemoryAPI", "MemoryAPI", "auto_inject_query", "context_to_proto"]
