"""Mutation testing of the modules that carry tunaflow's promises, one module at a time (mutmut 3).

Each module named in ``[tool.tunaflow.mutation.NAME]`` of pyproject.toml is mutated on its own, in a
scratch copy of the tree (``--workdir``, default ``/tmp/tunaflow-mutation/NAME``), against only the
test files that cover it (``tests``), with the shared ``[tool.mutmut]`` settings. Per module it
prints the mutants, how many the tests killed, how many survived, timed out or had no test, the
survivors marked equivalent in pyproject.toml (``equivalent``: mutant name → why), and the score:
killed and timed out over the mutants that are not equivalent.

Not part of CI (a module takes minutes to an hour). Rerun a module whenever its source changes::

    pip install -e '.[mutation]'
    python bench/mutation.py --list
    python bench/mutation.py --module reply_persistence --module fusion
    python bench/mutation.py            # every module, smallest first

A module's copy is kept: ``cd /tmp/tunaflow-mutation/NAME && mutmut show MUTANT`` shows a survivor's
diff; after writing tests, ``--retest`` runs only the last run's survivors again (``--fresh`` starts over,
as it must once the module's source has changed).

Every run records its figures and a digest of the files it mutated and tested, as they were in the
copy, in ``bench/data/mutation_runs.json`` (``--report`` records a copy's results without running).
``--stale`` lists the modules whose source or tests changed since their recorded run, or that have
none, and exits 1 if there is one: the modules to rerun before their figures can be quoted again::

    python bench/mutation.py --stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("src", "tests", "pyproject.toml", "README.md")
RECORD = ROOT / "bench" / "data" / "mutation_runs.json"
KILLS = "killed-since-fresh.json"  # in a module's copy: see carried_kills


@dataclass(frozen=True)
class Module:
    """One mutated unit: its source files, the tests that cover it, the survivors judged equivalent, and
    environment variables for its test run (``env``: e.g. fewer examples for a property test)."""

    name: str
    mutate: tuple[str, ...]
    tests: tuple[str, ...]
    equivalent: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def lines(self) -> int:
        return sum(len((ROOT / path).read_text(encoding="utf-8").splitlines()) for path in self.mutate)


@dataclass
class Figures:
    """What one module's run found."""

    mutants: int = 0
    killed: int = 0
    survived: int = 0
    timeout: int = 0
    no_tests: int = 0
    not_checked: int = 0
    other: int = 0
    survivors: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        judged = self.mutants - len(self.equivalent)
        return 100.0 * (self.killed + self.timeout) / judged if judged else 100.0


def files_of(module: Module, root: Path) -> list[str]:
    """The files a module's run depends on, relative to ``root``: its sources, then its tests (a folder of
    tests stands for every ``.py`` file in it)."""
    found = list(module.mutate)
    for entry in module.tests:
        path = root / entry
        if path.is_dir():
            found += sorted(str(file.relative_to(root)) for file in path.rglob("*.py"))
        else:
            found.append(entry)
    return found


def digests(module: Module, root: Path) -> dict[str, str]:
    """sha256 of each file a module's run depends on, as it is under ``root`` (a missing file: ``missing``)."""
    out = {}
    for name in files_of(module, root):
        path = root / name
        out[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    return out


def load_record(path: Path = RECORD) -> dict[str, dict[str, object]]:
    """The recorded runs, by module name (empty when nothing was recorded)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def record(module: Module, figures: Figures, workdir: Path, when: str, path: Path = RECORD) -> None:
    """Keep a module's figures with the digests of the files its run used (those of the copy in ``workdir``)."""
    runs = load_record(path)
    runs[module.name] = {
        "when": when, "mutants": figures.mutants, "killed": figures.killed, "timeout": figures.timeout,
        "survived": figures.survived, "no_tests": figures.no_tests, "not_run": figures.not_checked,
        "equivalent": len(figures.equivalent), "score": round(figures.score, 1),
        "files": digests(module, workdir),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def stale(modules: list[Module], root: Path = ROOT, path: Path = RECORD) -> list[tuple[str, str]]:
    """Modules whose recorded run no longer stands, each with why: never recorded, not run to the end, or a
    source or test file changed, added or removed since."""
    runs = load_record(path)
    found = []
    for module in modules:
        run = runs.get(module.name)
        if run is None:
            found.append((module.name, "no recorded run"))
            continue
        was, now = dict(run["files"]), digests(module, root)  # type: ignore[call-overload]
        changed = sorted(name for name in set(was) | set(now) if was.get(name) != now.get(name))
        if changed:
            found.append((module.name, "changed since its run: " + ", ".join(changed)))
        elif run.get("not_run"):
            found.append((module.name, f"{run['not_run']} mutants not run"))
    return found


def load_modules() -> dict[str, Module]:
    """The modules configured in pyproject.toml, by name."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    table = config["tool"]["tunaflow"]["mutation"]
    return {name: Module(name, tuple(spec["mutate"]), tuple(spec["tests"]), dict(spec.get("equivalent", {})),
                         {key: str(value) for key, value in spec.get("env", {}).items()})
            for name, spec in table.items()}


def prepare(module: Module, workdir: Path, *, fresh: bool) -> None:
    """A scratch copy of the tree whose [tool.mutmut] mutates only ``module`` and runs only its tests."""
    if fresh and workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source, target = ROOT / name, workdir / name
        if source.is_dir():
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, target)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    header = "[tool.mutmut]\n"
    if header not in pyproject:
        raise SystemExit("pyproject.toml has no [tool.mutmut] section")
    selection = (f"only_mutate = {json.dumps(list(module.mutate))}\n"
                 f"pytest_add_cli_args_test_selection = {json.dumps(list(module.tests))}\n")
    (workdir / "pyproject.toml").write_text(pyproject.replace(header, header + selection, 1), encoding="utf-8")


def _statuses(workdir: Path, env: dict[str, str]) -> list[tuple[str, str]]:
    """Every mutant of the last run in ``workdir`` with its status (killed, survived, ...)."""
    results = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=workdir, env=env,
                             capture_output=True, text=True, check=False)
    found = []
    for line in results.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            found.append((name, status))
    return found


def run(module: Module, workdir: Path, *, max_children: int, fresh: bool, retest: bool = False,
        report_only: bool = False) -> Figures:
    """Mutate ``module`` in ``workdir`` and read back what mutmut found (``retest``: only the survivors of
    the last run, against the tests as they are now; ``report_only``: read the last run, run nothing)."""
    if not report_only:
        prepare(module, workdir, fresh=fresh and not retest)
    mutated = workdir / "mutants" / "src"
    # It must exist before mutmut starts: Python remembers a path that was missing when first looked at as
    # holding nothing, and tunaflow would then be imported unmutated from wherever it is installed.
    mutated.mkdir(parents=True, exist_ok=True)
    # subprocesses started by the tests import the mutants too
    env = {**os.environ, **module.env, "PYTHONPATH": str(mutated)}
    env.pop("MUTANT_UNDER_TEST", None)
    if report_only:
        return read_figures(module, workdir, env, 0.0)
    if fresh and not retest:
        (workdir / KILLS).unlink(missing_ok=True)
    statuses = _statuses(workdir, env)
    killed = carried_kills(module, workdir, statuses)  # what this copy's earlier runs killed, before mutmut forgets
    names = retest_names(statuses, killed) if retest else []
    started = time.monotonic()
    log = workdir / "mutmut-run.log"
    if not retest or names:
        with log.open("w", encoding="utf-8") as out:
            done = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children), *names],
                                  cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            print(f"{module.name}: mutmut failed (exit {done.returncode}); see {log}", file=sys.stderr)
    return read_figures(module, workdir, env, time.monotonic() - started)


def retest_names(statuses: list[tuple[str, str]], killed_before: set[str]) -> list[str]:
    """The mutants a retest runs: the survivors, and those no run has settled since the tests changed (mutmut
    says "not checked" for every mutant once the tests change; a retest stopped half-way leaves its survivors so)."""
    return [name for name, status in statuses
            if status in ("survived", "no tests", "suspicious")
            or (status == "not checked" and name not in killed_before)]


def carried_kills(module: Module, workdir: Path, statuses: list[tuple[str, str]]) -> set[str]:
    """The mutants killed by any run of this copy since its fresh run, kept in ``workdir/KILLS`` with the digest
    of the sources they were made from. mutmut forgets its results once the tests change, and a retest runs only
    the survivors: a mutant killed before stays killed (tests are only added), unless the source changed."""
    sources = {name: digest for name, digest in digests(module, workdir).items() if name in module.mutate}
    path = workdir / KILLS
    kept: set[str] = set()
    if path.is_file():
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("sources") == sources:
            kept = set(saved.get("killed", []))
    kept |= {name for name, status in statuses if status in ("killed", "timeout")}
    path.write_text(json.dumps({"sources": sources, "killed": sorted(kept)}), encoding="utf-8")
    return kept


def read_figures(module: Module, workdir: Path, env: dict[str, str], seconds: float) -> Figures:
    """What the runs in ``workdir`` found since its fresh run, with ``module``'s equivalent survivors set apart."""
    figures = Figures(seconds=seconds)
    statuses = _statuses(workdir, env)
    killed_before = carried_kills(module, workdir, statuses)
    for name, status in statuses:
        if status == "not checked" and name in killed_before:
            status = "killed"
        figures.mutants += 1
        if status == "killed":
            figures.killed += 1
        elif status == "timeout":
            figures.timeout += 1
        elif status == "survived" or status == "no tests":
            if status == "survived":
                figures.survived += 1
            else:
                figures.no_tests += 1
            if name in module.equivalent:
                figures.equivalent.append(name)
            else:
                figures.survivors.append(f"{name} ({status})")
        elif status == "not checked":  # the run stopped before this mutant
            figures.not_checked += 1
        else:
            figures.other += 1
            figures.survivors.append(f"{name} ({status})")
    return figures


def main(argv: list[str] | None = None) -> int:
    modules = load_modules()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", choices=sorted(modules), help="only this module (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the modules, their sources and tests")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tunaflow-mutation"))
    parser.add_argument("--max-children", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--fresh", action="store_true", help="forget an earlier run of the module")
    parser.add_argument("--retest", action="store_true",
                        help="test only the last run's survivors again, with the tests as they are now")
    parser.add_argument("--report", action="store_true",
                        help="read and record the last run of each module's copy, without running anything")
    parser.add_argument("--stale", action="store_true",
                        help="list the modules whose recorded run no longer stands (exit 1 if any)")
    args = parser.parse_args(argv)
    chosen = [modules[name] for name in args.module] if args.module else sorted(modules.values(),
                                                                                 key=Module.lines)
    if args.list:
        for module in chosen:
            print(f"{module.name}: {', '.join(module.mutate)} ({module.lines()} lines) <- {', '.join(module.tests)}")
        return 0
    if args.stale:
        found = stale(chosen)
        for name, why in found:
            print(f"{name}: {why}")
        if not found:
            print("every module's recorded run stands")
        return 1 if found else 0
    print("| module | mutants | killed | survived | timed out | no tests | not run | equivalent | score | minutes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    reports: list[tuple[Module, Figures]] = []
    for module in chosen:
        workdir = args.workdir / module.name
        figures = run(module, workdir, max_children=args.max_children, fresh=args.fresh, retest=args.retest,
                      report_only=args.report)
        if figures.mutants:
            record(module, figures, workdir, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
        reports.append((module, figures))
        print(f"| {module.name} | {figures.mutants} | {figures.killed} | {figures.survived} | {figures.timeout} | "
              f"{figures.no_tests} | {figures.not_checked} | {len(figures.equivalent)} | {figures.score:.0f}% | "
              f"{figures.seconds / 60:.1f} |", flush=True)
    for module, figures in reports:
        for survivor in figures.survivors:
            print(f"survivor {module.name}: {survivor}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
