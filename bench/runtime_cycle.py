"""Benchmark: one Plan → Done cycle with instant in-process engines, and where its time goes.

Target: with engines that answer instantly, the orchestration of a whole cycle (proposal →
approve → Dev → the project's tests → two reviewers → accept → merge) costs at most 2 s, not
counting the project's own test run.

Each repetition builds a throwaway git project with a tiny pytest suite and runs the cycle
in-process through ``WorkflowRuntime``. It reports:
  * the total wall time, the time of the project's test run, and the overhead (total − tests),
  * a baseline measured in the same run: the bare git commands the cycle cannot avoid
    (create worktree, commit, diff, fast-forward merge, remove worktree) on the same project,
  * one extra run under cProfile, grouped by area (git, storage, markers, plan docs, context,
    engine…), with the top entries by cumulative time and every git command the cycle ran.

Run:  .venv/bin/python bench/runtime_cycle.py [--repeat 3] [--top 5]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tunaflow_tui.agents.agent_events import EngineEvent, FinalMessage, SessionStarted, TextDelta, Usage
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.core.settings import EngineConfig, RolesConfig, Settings, WorkflowConfig
from tunaflow_tui.runtime import review
from tunaflow_tui.runtime.runtime import WorkflowRuntime

TARGET_S = 2.0

# ----------------------------------------------------------------------------- the project
SUBTASKS = ("Add `mul(a, b)` to calc.py", "Test `mul` in tests/test_mul.py")

PROPOSAL = (
    "I looked at calc.py. Here is the plan.\n\n"
    "<!-- tunaflow:plan-proposal -->\n# Add multiplication to calc\n\n## Subtasks\n"
    + "".join(f"{n}. {title}\n" for n, title in enumerate(SUBTASKS, 1))
    + "\n## Description\nThe calculator can add but not multiply.\n<!-- /tunaflow:plan-proposal -->\n"
)
CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
MUL = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n"
DEV_WRITES = {"calc.py": MUL, "tests/test_mul.py": TEST_MUL}
DEV_DONE = (
    "I added mul and its test.\n\n"
    + "".join(f"<!-- tunaflow:subtask-done:{n} -->\n" for n in range(1, len(SUBTASKS) + 1))
    + "<!-- tunaflow:impl-complete -->\n"
)
VERDICT_PASS = (
    "I read the diff and the tests.\n\n<!-- tunaflow:review-verdict -->\nverdict: pass\n"
    "scores:\n- plan_coverage: 5\n- code_quality: 4\n"
    "findings:\n- mul() is covered by a test\nrecommendations:\n- keep it small\n"
    "<!-- /tunaflow:review-verdict -->\n"
)
IDENTITY = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]


def _git(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout


PAST_PLANS = 50  # a project that has been worked on with tunaflow for a while


def make_project(path: Path, past_plans: int = 0) -> Path:
    """A git project with calc.py and a one-test pytest suite, committed on ``main``.

    With ``past_plans``, the project has that many finished plans: in the database (done, with
    subtasks and events) and their documents committed under docs/plans, as tunaflow leaves them.
    """
    (path / "tests").mkdir(parents=True)
    (path / "calc.py").write_text(CALC)
    (path / "tests" / "test_calc.py").write_text(TEST_CALC)
    (path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    _git(["init", "-q", "-b", "main"], path)
    if past_plans:
        seed_past_plans(path, past_plans)
    _git(["add", "-A"], path)
    _git(["commit", "-q", "-m", "calc"], path)
    return path


def seed_past_plans(project: Path, count: int) -> None:
    """``count`` finished plans through the store, and their plan and task documents in docs/plans."""
    from tunaflow_tui.core.storage import Store

    docs = project / "docs" / "plans"
    docs.mkdir(parents=True)
    with Store.open(project) as store, store.transaction():
        for n in range(1, count + 1):
            slug = f"past-plan-{n}"
            subtasks = [(f"Step {k} of plan {n}", f"Change module_{n}_{k}.py and test it.") for k in range(1, 5)]
            plan = store.create_plan(title=f"Past plan {n}", slug=slug, description=f"Plan {n} of the past.",
                                     subtasks=subtasks, phase="done")
            for names in (("approved",), ("dev_started",), ("review_finished", "review_passed"), ("accepted",),
                          ("merged",)):
                for event in names:  # a passed review's event under the name this checkout gives it
                    try:
                        store.add_plan_event(plan.id, event, "system", {"round": 1, "verdict": "pass"})
                        break
                    except ValueError:
                        continue
            body = "\n".join(f"{k}. {title}\n   {details}" for k, (title, details) in enumerate(subtasks, 1))
            (docs / f"{slug}.md").write_text(f"# Past plan {n}\n\n## Subtasks\n{body}\n\n" + "Notes. " * 200)
            for k in range(1, 5):
                (docs / f"{slug}-task-{k:02d}.md").write_text(f"# Task {k} of plan {n}\n\n" + "Done. " * 100)


# ----------------------------------------------------------------------------- the instant engine
class InstantTurn(Turn):
    """Answers at once, per role, with the markers the cycle expects; the Developer really edits files."""

    def __init__(self, engine: InstantEngine, request: TurnRequest) -> None:
        self.engine = engine
        self.request = request

    def instant_reply(self) -> str:
        role = self.request.role
        if role == "architect":
            return PROPOSAL
        if role == "developer":
            for rel, content in DEV_WRITES.items():
                target = self.request.cwd / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
            return DEV_DONE
        if role in ("reviewer", "verifier"):
            return VERDICT_PASS
        return f"The {role} has nothing to add."

    async def __aiter__(self) -> AsyncIterator[EngineEvent]:
        yield SessionStarted(self.request.resume_session_id or f"instant-{uuid.uuid4()}")
        text = self.instant_reply()
        for paragraph in text.split("\n\n"):  # streamed like a real engine, paragraph by paragraph
            yield TextDelta(paragraph + "\n\n")
        yield Usage(input_tokens=len(self.request.prompt) // 4, output_tokens=len(text) // 4)
        yield FinalMessage(text)

    async def cancel(self) -> None:
        """Nothing runs between events, so there is nothing to stop."""


class InstantEngine(Engine):
    """An in-process engine with no latency (the configured type is ignored)."""

    type = "instant"

    def __init__(self, config: EngineConfig) -> None:
        self.name = config.name or self.type

    def start(self, request: TurnRequest) -> Turn:
        return InstantTurn(self, request)


ENGINE_FUNCS = {"instant_reply", "__aiter__", "cancel", "start", "__init__"}


def make_settings(worktree_root: Path) -> Settings:
    """Two named engines (the reviewers sit on different ones, as by default); worktrees under ``worktree_root``."""
    engines = {
        "fast-a": EngineConfig(name="fast-a", type="claude"),
        "fast-b": EngineConfig(name="fast-b", type="codex"),
    }
    roles = RolesConfig(architect="fast-a", developer="fast-a", reviewer="fast-a", verifier="fast-b",
                        synthesizer="fast-a", summarizer="fast-a")
    return Settings(roles=roles, engines=engines,
                    workflow=WorkflowConfig(worktree_root=worktree_root, test_timeout_s=120))


# ----------------------------------------------------------------------------- timing the cycle
@dataclass
class CycleTimes:
    """Wall times of one cycle, per step, and of the project's test run inside it."""

    steps: dict[str, float] = field(default_factory=dict)
    tests: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.steps.values())

    @property
    def overhead(self) -> float:
        return self.total - self.tests


_TEST_RUNS: list[float] = []
_real_run_tests = review.run_tests
_replay: dict[str, Any] = {}  # "result": a finished run's TestResult, answered instead of running again


def _timed_run_tests(*args: Any, **kwargs: Any) -> Any:
    start = time.perf_counter()
    try:
        if "result" in _replay:
            return _replay["result"]
        result = _real_run_tests(*args, **kwargs)
        _replay["last"] = result
        return result
    finally:
        _TEST_RUNS.append(time.perf_counter() - start)


review.run_tests = _timed_run_tests  # type: ignore[assignment]


async def _cycle(project: Path, worktree_root: Path, times: CycleTimes) -> None:
    @contextmanager
    def step(name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        times.steps[name] = time.perf_counter() - start

    with step("open runtime"):
        rt = WorkflowRuntime(project, make_settings(worktree_root), engine_factory=InstantEngine)
    try:
        with step("proposal"):
            await rt.send_user_message("Please add multiplication")
            plan = rt.store.list_plans()[-1]  # the one just proposed (past plans come first)
        assert plan.pending_decision == "approval", plan
        with step("approve: dev+tests+review"):
            plan = await rt.decide(plan.id, "approve")
        assert plan.pending_decision == "review" and plan.pending_detail["verdict"] == "pass", plan.pending_detail
        assert plan.pending_detail["tests"]["status"] == "passed", plan.pending_detail["tests"]
        with step("accept"):
            plan = await rt.decide(plan.id, "accept")
        assert plan.phase == "done", plan.phase
        with step("merge"):
            result = rt.merge(plan.id)
        assert str(result.kind) == "fast-forward", result
        assert "def mul" in (project / "calc.py").read_text()
    finally:
        with step("close"):
            rt.close()


def run_cycle(project: Path) -> CycleTimes:
    """Run the whole cycle on ``project`` (its worktrees go beside it)."""
    times = CycleTimes()
    del _TEST_RUNS[:]
    asyncio.run(_cycle(project, project.parent / "worktrees", times))
    assert len(_TEST_RUNS) == 1, f"expected one test run, saw {len(_TEST_RUNS)}"
    times.tests = _TEST_RUNS[0]
    return times


# ----------------------------------------------------------------------------- the baseline
def bare_git(root: Path, name: str) -> float:
    """The git work a cycle cannot avoid, run directly: worktree, commit, diff, ff-merge, remove."""
    project = make_project(root / name / "calc-project")
    worktree = root / name / "worktrees" / "add-multiplication-to-calc"
    worktree.parent.mkdir(parents=True)
    start = time.perf_counter()
    _git(["worktree", "add", "-q", "-b", "tunaflow/add-multiplication-to-calc", str(worktree), "main"], project)
    for rel, content in DEV_WRITES.items():
        (worktree / rel).write_text(content)
    (worktree / "docs" / "plans").mkdir(parents=True)
    (worktree / "docs" / "plans" / "add-multiplication-to-calc.md").write_text(PROPOSAL)
    _git(["add", "-A"], worktree)
    _git(["commit", "-q", "-m", "work"], worktree)
    _git(["diff", "--no-color", "main...HEAD"], worktree)
    _git(["merge", "-q", "--ff-only", "tunaflow/add-multiplication-to-calc"], project)
    _git(["worktree", "remove", str(worktree)], project)
    return time.perf_counter() - start


# ----------------------------------------------------------------------------- the profile
AREAS: tuple[tuple[str, Callable[[str, str], bool]], ...] = (
    ("git subprocesses (core/gitops)", lambda f, n: "/tunaflow_tui/core/gitops/" in f),
    ("storage (core/storage)", lambda f, n: "/tunaflow_tui/core/storage/" in f),
    ("workflow service (core/workflow)", lambda f, n: "/tunaflow_tui/core/workflow/" in f),
    ("markers (core/markers)", lambda f, n: "/tunaflow_tui/core/markers/" in f),
    ("plan docs (core/plandocs)", lambda f, n: "/tunaflow_tui/core/plandocs/" in f),
    ("context/tokenizer", lambda f, n: any(f.endswith(m) for m in (
        "/runtime/context_builder.py", "/runtime/context.py", "/runtime/tokens.py"))),
    ("personas", lambda f, n: f.endswith("/tunaflow_tui/core/personas.py")),
    ("test detection (core/testrunner)", lambda f, n: f.endswith("/tunaflow_tui/core/testrunner.py")),
    ("engine", lambda f, n: "/tunaflow_tui/agents/" in f or (f == __file__ and n in ENGINE_FUNCS)),
)
Func = tuple[str, int, str]


def area_of(func: Func) -> str | None:
    filename, _line, name = func
    for area, match in AREAS:
        if match(filename, name):
            return area
    return None


def _is_ours(func: Func) -> bool:
    return "/tunaflow_tui/" in func[0] or func[0] == __file__


def area_breakdown(stats: pstats.Stats) -> dict[str, tuple[float, list[tuple[float, int, Func]]]]:
    """Per area: time spent inside it, and its entry points by cumulative time.

    An area's time is the cumulative time of calls into it from tunaflow code outside the area
    (a library calling back into an area is already inside the call that led there), minus the
    area's calls into other areas, direct or through one helper outside every area (that helper's
    time is shared out among its callers in proportion), so the areas do not overlap.
    """
    raw: dict[Func, Any] = stats.stats  # type: ignore[attr-defined]
    inside: Counter[str] = Counter()
    outgoing: Counter[str] = Counter()
    entries: dict[str, list[tuple[float, int, Func]]] = {area: [] for area, _ in AREAS}
    helper_into_areas: Counter[Func] = Counter()  # helper outside every area → its time spent in areas
    for func, (_cc, _nc, _tt, _ct, callers) in raw.items():
        area = area_of(func)
        if area is None:
            continue
        entered_ct, entered_n = 0.0, 0
        for caller, (nc, _ccc, _ttt, ct) in callers.items():
            caller_area = area_of(caller)
            if caller_area == area or not _is_ours(caller):
                continue
            entered_ct += ct
            entered_n += nc
            if caller_area is not None:
                outgoing[caller_area] += ct
            else:
                helper_into_areas[caller] += ct
        if entered_n:
            inside[area] += entered_ct
            entries[area].append((entered_ct, entered_n, func))
    for helper, in_areas in helper_into_areas.items():
        _cc, _nc, _tt, helper_ct, callers = raw[helper]
        for caller, (_n, _c, _t, ct) in callers.items():
            caller_area = area_of(caller)
            if caller_area is not None and helper_ct > 0:
                outgoing[caller_area] += in_areas * ct / helper_ct
    return {
        area: (inside[area] - outgoing[area], sorted(entries[area], reverse=True))
        for area, _ in AREAS
    }


def _short(func: Func) -> str:
    filename, line, name = func
    if filename == __file__:
        return f"bench/runtime_cycle.py:{name}"
    marker = "/tunaflow_tui/"
    if marker in filename:
        filename = filename.split(marker, 1)[1]
    return f"{filename}:{line}:{name}"


@dataclass(frozen=True)
class GitCall:
    """One git subprocess: its subcommand, the gitops function that ran it, the runtime step, wall time."""

    command: str
    via: str
    step: str
    seconds: float


def _callers() -> tuple[str, str]:
    """Who ran the git command: the outermost core/gitops function (else the innermost tunaflow one),
    and the innermost runtime function above it."""
    via, step = "", ""
    frame = sys._getframe(2)
    while frame is not None:
        filename, name = frame.f_code.co_filename, frame.f_code.co_name
        if "/tunaflow_tui/core/gitops/" in filename:
            via = name
        elif "/tunaflow_tui/runtime/" in filename and not step:
            step = f"{Path(filename).stem}.{name}"
        elif "/tunaflow_tui/" in filename and not via:
            via = f"{Path(filename).stem}.{name}"
        frame = frame.f_back  # type: ignore[assignment]
    return via or "?", step or "?"


@contextmanager
def git_command_log() -> Iterator[list[GitCall]]:
    """Record every ``git`` subprocess (subcommand, caller, wall time) while the block runs."""
    log: list[GitCall] = []
    real = subprocess.run

    def recording_run(argv: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return real(argv, *args, **kwargs)
        finally:
            if isinstance(argv, list | tuple) and argv and argv[0] == "git":
                seconds = time.perf_counter() - start
                words = [str(a) for a in argv[1:]]
                while words[:1] == ["-c"]:  # identity overrides
                    words = words[2:]
                words = [w for w in words if not w.startswith(("-", "/")) and len(w) < 40][:2]
                log.append(GitCall(" ".join(words), *_callers(), seconds))

    subprocess.run = recording_run  # type: ignore[assignment]
    try:
        yield log
    finally:
        subprocess.run = real  # type: ignore[assignment]


def profile_cycle(root: Path, top: int) -> None:
    """Run one more cycle under cProfile and print where its time went."""
    project = make_project(root / "profiled" / "calc-project", PAST_PLANS)
    # the tests' result is replayed from the last real run: only orchestration runs under the profiler
    _replay["result"] = _replay["last"]
    profiler = cProfile.Profile()
    try:
        with git_command_log() as git_log:
            start = time.perf_counter()
            profiler.enable()
            run_cycle(project)
            profiler.disable()
            wall = time.perf_counter() - start
    finally:
        del _replay["result"]
    stats = pstats.Stats(profiler)
    raw: dict[Func, Any] = stats.stats  # type: ignore[attr-defined]
    breakdown = area_breakdown(stats)
    print(f"\nProfiled run, {PAST_PLANS} past plans: {wall:.3f} s of orchestration (the tests' result replayed; cProfile inflates "
          "Python-heavy areas). × counts calls; a coroutine or generator counts each resumption.")
    accounted = 0.0
    for area, (seconds, top_entries) in sorted(breakdown.items(), key=lambda kv: -kv[1][0]):
        accounted += seconds
        print(f"  {area:<36} {seconds * 1000:8.1f} ms  {seconds / wall:6.1%}")
        for ct, calls, func in top_entries[:top]:
            print(f"      {ct * 1000:8.1f} ms  {calls:4d}×  {_short(func)}")
    other = wall - accounted
    print(f"  {'other (runtime steps, asyncio, pydantic)':<36} {other * 1000:8.1f} ms  {other / wall:6.1%}")

    sql = sum(v[1] for f, v in raw.items() if f[0] == "~" and "execute' of 'sqlite3." in f[2])
    polls = [edge for f, (*_, callers) in raw.items() if f[2] == "<built-in method time.sleep>"
             for caller, edge in callers.items() if caller[0].endswith("subprocess.py") and caller[2] == "_wait"]
    print(f"\n  SQL statements executed: {sql}")
    print(f"  subprocess wait() polling sleeps (a timeout makes Popen.wait poll): "
          f"{sum(e[0] for e in polls)} sleeps, {sum(e[3] for e in polls) * 1000:.1f} ms")

    runtime_funcs = sorted(
        ((ct, nc, func) for func, (_cc, nc, _tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
         if "/tunaflow_tui/runtime/" in func[0]),
        reverse=True,
    )
    print("\n  Runtime steps by cumulative time (inclusive of everything they call):")
    for ct, calls, func in runtime_funcs[: top * 2]:
        print(f"      {ct * 1000:8.1f} ms  {calls:4d}×  {_short(func)}")

    total_git = sum(c.seconds for c in git_log)
    print(f"\n  git subprocesses: {len(git_log)} calls, {total_git * 1000:.1f} ms "
          f"(mean {total_git / max(1, len(git_log)) * 1000:.1f} ms each); by command, then who ran it:")
    by_command: dict[str, list[GitCall]] = {}
    for call in git_log:
        by_command.setdefault(call.command, []).append(call)
    for command, calls in sorted(by_command.items(), key=lambda kv: -sum(c.seconds for c in kv[1])):
        callers = Counter(f"{c.via} ← {c.step}" for c in calls)
        where = ", ".join(f"{n}× {who}" for who, n in callers.most_common())
        print(f"      {len(calls):3d}× {sum(c.seconds for c in calls) * 1000:6.1f} ms  git {command:<22} {where}")


# ----------------------------------------------------------------------------- main
def _isolate_environment(root: Path) -> None:
    """Keep the user's tunaflow config, data dir and pytest plugins out of the measurement."""
    for key in [k for k in os.environ if k.upper().startswith("TUNAFLOW_")]:
        del os.environ[key]
    os.environ["XDG_DATA_HOME"] = str(root / "xdg-data")
    os.environ["XDG_CONFIG_HOME"] = str(root / "xdg-config")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=5, help="entries shown per area in the profile")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tunaflow-bench-") as tmp:
        root = Path(tmp).resolve()
        _isolate_environment(root)

        cold = run_cycle(make_project(root / "cold" / "calc-project"))
        print(f"first cycle in this process (imports, tokenizer load): total {cold.total:.3f} s, "
              f"tests {cold.tests:.3f} s, overhead {cold.overhead:.3f} s")

        # interleaved: a fresh project, one with PAST_PLANS finished plans, the bare git baseline
        runs, runs_past, baselines = [], [], []
        for n in range(args.repeat):
            runs.append(run_cycle(make_project(root / f"run-{n}" / "calc-project")))
            runs_past.append(run_cycle(make_project(root / f"past-{n}" / "calc-project", PAST_PLANS)))
            baselines.append(bare_git(root, f"bare-{n}"))

        print(f"\nWarm cycles ({args.repeat} interleaved repetitions, median; empty database | "
              f"{PAST_PLANS} finished plans in it and their documents in the repository):")
        for name in runs[0].steps:
            print(f"  {name:<28} {statistics.median(r.steps[name] for r in runs) * 1000:8.1f} ms"
                  f"  | {statistics.median(r.steps[name] for r in runs_past) * 1000:8.1f} ms")
        total = statistics.median(r.total for r in runs)
        tests = statistics.median(r.tests for r in runs)
        overhead = statistics.median(r.overhead for r in runs)
        baseline = statistics.median(baselines)
        print(f"  {'total wall':<28} {total * 1000:8.1f} ms   (each: "
              + ", ".join(f"{r.total:.3f}" for r in runs) + " s)")
        print(f"  {'project tests (run_tests)':<28} {tests * 1000:8.1f} ms")
        print(f"  {'orchestration overhead':<28} {overhead * 1000:8.1f} ms   (each: "
              + ", ".join(f"{r.overhead:.3f}" for r in runs) + " s)")
        print(f"  {'baseline: bare git ops':<28} {baseline * 1000:8.1f} ms   "
              "(worktree add, add+commit, diff, ff-merge, worktree remove)")
        print(f"  {'ratio overhead / baseline':<28} {overhead / baseline:8.1f}x")
        past_overhead = statistics.median(r.overhead for r in runs_past)
        print(f"  {'overhead, ' + str(PAST_PLANS) + ' past plans':<28} {past_overhead * 1000:8.1f} ms   (each: "
              + ", ".join(f"{r.overhead:.3f}" for r in runs_past) + f" s); {past_overhead / overhead:.2f}x "
              "the empty database's")
        verdict = "PASS" if max(overhead, past_overhead) <= TARGET_S else "FAIL"
        print(f"  {verdict}: overhead {overhead:.3f} s ({past_overhead:.3f} s with {PAST_PLANS} past plans) "
              f"vs target {TARGET_S:.1f} s")

        profile_cycle(root, args.top)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
