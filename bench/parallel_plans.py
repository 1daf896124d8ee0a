"""Benchmark: several plans developing at once, against one plan alone.

Targets: three plans whose stand-in Developers each take ``--delay`` seconds (10 s in the recorded
figures) finish development in at most 1.2× the time of one plan (``max_parallel_plans = 3``), and the
orchestration overhead per plan stays flat from 1 to 10 plans in flight.

Each case builds a throwaway git project with a tiny pytest suite, seeds N plans at the approval gate
(no Architect turn) and approves them all at once through ``WorkflowRuntime.decide`` (automatic review
off: the clock stops when every Developer has reported its work and tunaflow has committed it). The
stand-in Developer is an in-process engine that waits ``--delay`` seconds, then writes the files and
reports the markers, so what is measured besides the delay is tunaflow's own work: worktree and branch,
plan documents, git guard before and after the turn, the reply stored and parsed, the commit.

Figures per case (N = 1, 3, 10; the cap is 3 for N ≤ 3 and N for 10):
  * the wall time until every plan finished development, and its ratio to N = 1 (the baseline,
    measured in the same run);
  * the overhead per plan: each plan's own time from its approval to the end of its development,
    minus the delay (median and max), and the CPU time per plan (tunaflow's process and its git
    children together, divided by N).

Run:  python bench/parallel_plans.py [--delay 1] [--rounds 1] [--sizes 1,3,10]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from runtime_cycle import DEV_DONE, DEV_WRITES, SUBTASKS, make_project  # noqa: E402

from tunaflow_tui.agents.agent_events import EngineEvent, FinalMessage, SessionStarted, TextDelta  # noqa: E402
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest  # noqa: E402
from tunaflow_tui.core.settings import EngineConfig, RolesConfig, Settings, WorkflowConfig  # noqa: E402
from tunaflow_tui.runtime.runtime import WorkflowRuntime  # noqa: E402

TARGET_RATIO = 1.2


class SlowDeveloperTurn(Turn):
    """The Developer takes ``delay`` seconds, then edits the files and reports done; other roles answer at once."""

    def __init__(self, request: TurnRequest, delay: float) -> None:
        self.request = request
        self.delay = delay

    async def __aiter__(self) -> AsyncIterator[EngineEvent]:
        yield SessionStarted(f"bench-{uuid.uuid4()}")
        if self.request.role == "developer":
            await asyncio.sleep(self.delay)
            for rel, content in DEV_WRITES.items():
                target = self.request.cwd / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
            text = DEV_DONE
        else:
            text = f"The {self.request.role} has nothing to add."
        for paragraph in text.split("\n\n"):
            yield TextDelta(paragraph + "\n\n")
        yield FinalMessage(text)

    async def cancel(self) -> None:
        """The delay is the only wait; a cancelled task ends it."""


def engine_factory(delay: float) -> type[Engine]:
    class SlowDeveloperEngine(Engine):
        type = "bench"

        def __init__(self, config: EngineConfig) -> None:
            self.name = config.name or self.type

        def start(self, request: TurnRequest) -> Turn:
            return SlowDeveloperTurn(request, delay)

    return SlowDeveloperEngine


def make_settings(worktree_root: Path, cap: int) -> Settings:
    engines = {"bench": EngineConfig(name="bench", type="claude")}
    roles = RolesConfig(architect="bench", developer="bench", reviewer="bench", verifier="bench",
                        synthesizer="bench", summarizer="bench")
    return Settings(roles=roles, engines=engines, workflow=WorkflowConfig(
        worktree_root=worktree_root, max_parallel_plans=cap, auto_review=False, test_timeout_s=120))


@dataclass(frozen=True)
class CaseResult:
    plans: int
    cap: int
    wall: float
    overheads: tuple[float, ...]
    cpu_per_plan: float


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _develop_all(project: Path, plans: int, cap: int, delay: float) -> CaseResult:
    rt = WorkflowRuntime(project, make_settings(project.parent / "worktrees", cap),
                         engine_factory=engine_factory(delay))
    try:
        ids = [rt.service.create_plan_from_proposal(title=f"Plan {n}", slug=f"plan-{n}",
                                                    subtasks=[(t, "") for t in SUBTASKS]).id
               for n in range(1, plans + 1)]
        spans: list[float] = []

        async def approve(plan_id: int) -> None:
            start = time.perf_counter()
            plan = await rt.decide(plan_id, "approve")
            spans.append(time.perf_counter() - start)
            assert plan.phase == "review", (plan.phase, plan.pending_decision, dict(plan.pending_detail))

        cpu = _cpu()
        start = time.perf_counter()
        await asyncio.gather(*(approve(plan_id) for plan_id in ids))
        wall = time.perf_counter() - start
        cpu = _cpu() - cpu
    finally:
        rt.close()
    return CaseResult(plans, cap, wall, tuple(span - delay for span in spans), cpu / plans)


def run_case(plans: int, cap: int, delay: float) -> CaseResult:
    with tempfile.TemporaryDirectory(prefix="tunaflow-parallel-") as tmp:
        project = make_project(Path(tmp) / "calc-project")
        return asyncio.run(_develop_all(project, plans, cap, delay))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds each stand-in Developer takes")
    parser.add_argument("--rounds", type=int, default=1, help="repetitions of each case (the median is shown)")
    parser.add_argument("--sizes", default="1,3,10", help="plans in flight per case (the first is the baseline)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, list[CaseResult]] = {n: [] for n in sizes}
    for _ in range(args.rounds):  # interleaved, so a change in the machine's load touches every case alike
        for n in sizes:
            results[n].append(run_case(n, max(3, n), args.delay))
    base = statistics.median(r.wall for r in results[sizes[0]])
    print(f"stand-in Developer delay: {args.delay:.1f} s; rounds: {args.rounds}; baseline: {sizes[0]} plan(s)")
    print(f"{'plans':>5} {'cap':>4} {'wall s':>8} {'/ base':>7} {'overhead/plan median ms':>24} "
          f"{'max ms':>8} {'CPU/plan ms':>12}")
    for n in sizes:
        runs = results[n]
        wall = statistics.median(r.wall for r in runs)
        overheads = [o for r in runs for o in r.overheads]
        print(f"{n:>5} {runs[0].cap:>4} {wall:>8.2f} {wall / base:>6.2f}× {statistics.median(overheads) * 1000:>24.0f} "
              f"{max(overheads) * 1000:>8.0f} {statistics.median(r.cpu_per_plan for r in runs) * 1000:>12.0f}")
    if 3 in results:
        ratio = statistics.median(r.wall for r in results[3]) / base
        verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"three plans / one plan: {ratio:.2f}× (target ≤ {TARGET_RATIO}×: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
