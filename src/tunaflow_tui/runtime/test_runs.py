"""The project's tests as a step of the cycle: recorded while they run, stopped at once when the step is.

:func:`~tunaflow_tui.core.testrunner.run_tests` blocks, so it runs in a thread; cancelling the
awaiting task does not stop a thread, and without more the test command would run on to its end
(and ``tunaflow run`` wait for it on exit). Here a cancel ends the test run's process group at
once. While the tests run their process group is recorded with the plan, so that a tunaflow
started after a crash can tell that the earlier run is still going.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tunaflow_tui.core.processes import ProcessIdentity, end_group, signal_group
from tunaflow_tui.core.testrunner import TestResult

if TYPE_CHECKING:
    from tunaflow_tui.runtime.ports import ProjectData

STOP_GRACE_S = 1.0
"""How long a cancelled test run gets to end after SIGTERM before SIGKILL."""


OnStart = Callable[[ProcessIdentity], None]
"""Told the test run's process group as soon as it started (``run_tests``'s ``on_start``)."""


async def run_tests_for_plan(rt: ProjectData, plan_id: int, label: str,
                             run: Callable[[OnStart], TestResult]) -> TestResult:
    """Call ``run`` (which runs the tests, passing ``on_start`` to ``run_tests``) in a thread, for plan ``plan_id``.

    ``label`` names the command in the record. A cancel stops the test run at once.
    """
    started: list[ProcessIdentity] = []
    records: list[int] = []
    stopping = threading.Event()

    def on_start(identity: ProcessIdentity) -> None:  # in the test runner's thread
        started.append(identity)
        if stopping.is_set():  # cancelled while the command was starting: it must not run on unseen
            signal_group(identity.pgid, signal.SIGKILL)
            return
        record = rt.store.record_process("tests", identity, label=f"tests ({label})", plan_id=plan_id)
        records.append(record.id)

    try:
        return await asyncio.to_thread(run, on_start)
    except asyncio.CancelledError:
        stopping.set()
        for identity in list(started):
            await asyncio.to_thread(end_group, identity, STOP_GRACE_S)
        raise
    finally:
        for record_id in records:
            rt.store.forget_process(record_id)
