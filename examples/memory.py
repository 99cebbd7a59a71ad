"""Memory for a chat agent: remember what was said, search the events the historian
wrote, and read the profiles it keeps.

`remember` returns at once; the hub's historian rewrites each observation into an event
that stands on its own (no "I", no "today") with the hub's model, and merges what it
learned into the user's and the group's profiles. Without a model on the hub
(KNOWHUB_LLM_BASE_URL) the observation is stored as written and profiles stay empty.
Run it in the folder where `knowhub up` runs:

    .venv/bin/python examples/memory.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from knowhub import KnowHub

USER, GROUP = "10001", "20002"
T = TypeVar("T")


def wait_for(read: Callable[[], T], timeout: float = 30.0) -> T:
    """The historian works in the background: read again until it has written."""
    deadline = time.monotonic() + timeout
    while not (found := read()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


def main() -> None:
    kh = KnowHub()
    said = "I started learning asyncio today"
    result = kh.memory.remember(
        "explained asyncio.gather",
        [said],
        context={
            "user_id": USER,
            "group_id": GROUP,
            "source_message": said,
            "recent_messages": ["10002: is anyone learning asyncio?"],
        },
    )
    print("historian job", result.job_id)
    print("memos", [memo.text for memo in kh.memory.recent_memos(group_id=GROUP)])

    hits = wait_for(lambda: kh.memory.search_events("asyncio", target_group_id=GROUP))
    for hit in hits:
        print("event", hit.event.text, "absolute" if hit.event.is_absolute else "as said")

    # The profile is merged after the events; the hub needs a model to write one.
    profiles = wait_for(lambda: kh.memory.search_profiles("asyncio"), timeout=10.0)
    if profiles:
        print(kh.memory.get_profile("user", USER).markdown)
    else:
        print("no profile yet (the hub has no model to write one)")


if __name__ == "__main__":
    main()
