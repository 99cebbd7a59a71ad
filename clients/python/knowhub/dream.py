"""`kh.dream`: dream runs, their schedules and memory documents (`DreamAPI` for `KnowHub`,
`AsyncDreamAPI` for `AsyncKnowHub`)."""

from knowhub._async.dream import AsyncDreamAPI
from knowhub._sync.dream import DreamAPI

__all__ = ["AsyncDreamAPI", "DreamAPI"]
