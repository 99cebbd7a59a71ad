"""`kh.resources`: code, credentials and cookies next to knowledge (`ResourcesAPI` for
`KnowHub`, `AsyncResourcesAPI` for `AsyncKnowHub`)."""

from knowhub._async.resources import AsyncResourcesAPI
from knowhub._sync.resources import ResourcesAPI

__all__ = ["AsyncResourcesAPI", "ResourcesAPI"]
