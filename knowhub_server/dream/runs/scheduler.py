"""The scheduler: fires each due slot of each dream schedule once, however many dream
processes run it.

Every process ticks (KNOWHUB_DREAM_SCHEDULER_INTERVAL_SECONDS). A tick fires a schedule's
latest slot at or before now when it is later than the last slot fired: one Lua script
claims the slot's key (SET NX, so of several processes exactly one wins), creates the run
and enqueues it, and records the slot as the schedule's last. Slots missed while no
process ran are not replayed: the latest one fires once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis

from knowhub_server.common.runtime.runtime import Runtime
from knowhub_server.dream.runs.config import RunsSettings
from knowhub_server.dream.runs.domain import DreamRun, new_run
from knowhub_server.dream.runs.store import DreamStore
from knowhub_server.dream.streams import PoolThread, WorkerPool

log = logging.getLogger("knowhub.scheduler")

# How long a fired slot's key stays: far beyond the time two processes could take to read
# the same schedule state and race for its slot.
SLOT_KEY_SECONDS = 3_600


class Scheduler(WorkerPool):
    """One scheduler thread in this process; a Background of the runtime."""

    def __init__(
        self,
        runtime: Runtime,
        store: DreamStore,
        settings: RunsSettings,
        on_fire: Callable[[], None],
    ) -> None:
        super().__init__(runtime)
        self._store = store
        self._settings = settings
        self._on_fire = on_fire

    @property
    def wanted(self) -> bool:
        return self._settings.dream_scheduler_enabled

    def _new_workers(self) -> list[PoolThread]:
        return [_Ticker(self.tick, self._stopping, self._settings.dream_scheduler_interval_seconds)]

    def tick(self, at: float) -> list[DreamRun]:
        """Fires every schedule slot due at `at` that no process fired yet; returns the
        runs this call created."""
        schedules = self._store.all_schedules()
        fired = self._store.fired([s.schedule_id for s in schedules])
        created = []
        for schedule in schedules:
            slot = schedule.latest_slot(at)
            last = fired.get(schedule.schedule_id)
            if slot is None or (last is not None and slot <= last.slot):
                continue
            run = new_run(
                schedule.agent_id,
                [],
                schedule.phases,
                schedule.requested_by,
                schedule.sees_all,
                at,
                schedule.schedule_id,
            )
            if self._store.fire(schedule, slot, run, SLOT_KEY_SECONDS):
                log.info(
                    "schedule %s fired slot %s: run %s",
                    schedule.schedule_id,
                    time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(slot)),
                    run.run_id,
                )
                created.append(run)
        if created:
            self._on_fire()
        return created


class _Ticker(PoolThread):
    def __init__(
        self, tick: Callable[[float], object], stopping: threading.Event, interval: float
    ) -> None:
        super().__init__("dream-scheduler")
        self._tick = tick
        self._stopping = stopping
        self._interval = interval

    def run(self) -> None:
        while not self._stopping.wait(self._interval):
            try:
                self._tick(time.time())
            except redis.RedisError as exc:
                log.warning(
                    "dream scheduler: Redis failed (%s); trying again in %.1fs", exc, self._interval
                )
            except Exception:  # a bug: say so, and keep the schedules firing
                log.exception("dream scheduler: a tick failed")
