"""`KnowHub` (blocking) and `AsyncKnowHub` (asyncio): one object per hub, one attribute
per service (knowledge, resources, cognition, memory, dream).

    >>> kh = KnowHub("127.0.0.1:50051", token=None)
    >>> kh.knowledge.search("how to log in with selenium")

    >>> async with AsyncKnowHub("127.0.0.1:50051") as kh:
    ...     hits = await kh.knowledge.search("how to log in with selenium")
"""

from knowhub._async.client import AsyncKnowHub
from knowhub._sync.client import KnowHub
from knowhub._transport import DEFAULT_TIMEOUT
from knowhub.channels import DEFAULT_TARGET

__all__ = ["DEFAULT_TARGET", "DEFAULT_TIMEOUT", "AsyncKnowHub", "KnowHub"]
