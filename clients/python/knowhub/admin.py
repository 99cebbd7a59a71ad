"""`kh.admin`: calls on the whole hub, such as forgetting a subject (`AdminAPI` for
`KnowHub`, `AsyncAdminAPI` for `AsyncKnowHub`)."""

from knowhub._async.admin import AsyncAdminAPI
from knowhub._sync.admin import AdminAPI

__all__ = ["AdminAPI", "AsyncAdminAPI"]
