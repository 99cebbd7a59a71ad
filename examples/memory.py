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

from knowhub import KnowHub
from knowhub.errors import NotFound

USER, GROUP = "10001", "20002"


def main() -> None:
    kh = KnowHub()
    said = "I started learning asyncio today"
    result = kh.memory.remember(
        "explained asyncio.gather", [said],
        context={"user_id": USER, "group_id": GROUP, "source_message": said,
                 "recent_messages": ["10002: is anyone learning asyncio?"]})
    print("historian job", result.job_id)
    print("memos", [memo.text for memo in kh.memory.recent_memos(group_id=GROUP)])

    hits = kh.memory.search_events("asyncio", target_group_id=GROUP)
    deadline = time.monotonic() + 30
    while not hits and time.monotonic() < deadline:  # the historian is at work
        time.sleep(0.2)
        hits = kh.memory.search_events("asyncio", target_group_id=GROUP)
    for hit in hits:
        print("event", hit.event.text, "absolute" if hit.event.is_absolute else "as said")

    try:
        print(kh.memory.get_profile("user", USER).markdown)
    except NotFound:
        print("no profile yet (the hub has no model to write one)")


if __name__ == "__main__":
    main()
