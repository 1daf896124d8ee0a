"""A live process standing for a second tunaflow (``tunaflow run`` in another terminal) that holds leases.

The process itself only waits; the test seeds the leases it holds with :func:`idle_holder`'s
:class:`LeaseHolder`, so a lease counts as live for exactly as long as the process runs.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from waiting import until_sync

from tunaflow_tui.core.processes import start_ticks
from tunaflow_tui.core.storage.leases import LeaseHolder


@contextmanager
def idle_holder() -> Iterator[LeaseHolder]:
    """A live process on this host and boot, as a lease holder; it is killed when the block ends."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        until_sync(lambda: start_ticks(proc.pid) is not None, "the other process to start")
        here = LeaseHolder.this_process()
        yield LeaseHolder(here.host, here.boot_id, proc.pid, start_ticks(proc.pid))
    finally:
        proc.kill()
        proc.wait()


# A second tunaflow process approving a plan (argv: the support folder, the harness root, project, bin and
# data folders, the plan id): it prints the plan's phase after the approval.
OTHER_APPROVES = """
import asyncio, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from runtime_harness import Harness
from tunaflow_tui.runtime.runtime import WorkflowRuntime

root, project, bin_dir, data_dir = (Path(arg) for arg in sys.argv[2:6])


async def main() -> None:
    settings = Harness(root, project, bin_dir, data_dir).settings(max_parallel_plans=1, auto_review=False)
    rt = WorkflowRuntime(project, settings)
    try:
        print((await rt.decide(int(sys.argv[6]), "approve")).phase, flush=True)
    finally:
        rt.close()


asyncio.run(main())
"""
