"""The mutation runs' record (bench/mutation.py): which modules must be run again before their figures stand."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_bench", ROOT / "bench" / "mutation.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _tree(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "guard.py").write_text("def ok():\n    return True\n")
    (root / "tests" / "guard").mkdir(parents=True)
    (root / "tests" / "guard" / "test_a.py").write_text("def test_a():\n    pass\n")
    (root / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")


def test_a_module_is_stale_until_recorded_and_again_when_its_source_or_tests_change(tmp_path: Path) -> None:
    bench = _bench()
    root, record = tmp_path / "tree", tmp_path / "runs.json"
    _tree(root)
    module = bench.Module("guard", ("src/guard.py",), ("tests/guard", "tests/test_b.py"))
    other = bench.Module("other", ("src/guard.py",), ("tests/test_b.py",))
    assert bench.stale([module, other], root, record) == [("guard", "no recorded run"), ("other", "no recorded run")]

    figures = bench.Figures(mutants=10, killed=9, survived=1)
    bench.record(module, figures, root, "2026-12-06 15:00 UTC", record)
    assert bench.stale([module, other], root, record) == [("other", "no recorded run")]
    assert bench.load_record(record)["guard"]["score"] == 90.0

    (root / "src" / "guard.py").write_text("def ok():\n    return False\n")
    assert bench.stale([module], root, record) == [("guard", "changed since its run: src/guard.py")]
    bench.record(module, figures, root, "2026-12-06 15:10 UTC", record)
    assert bench.stale([module], root, record) == []

    (root / "tests" / "guard" / "test_new.py").write_text("def test_new():\n    pass\n")
    assert bench.stale([module], root, record) == [("guard", "changed since its run: tests/guard/test_new.py")]
    bench.record(module, figures, root, "2026-12-06 15:20 UTC", record)
    (root / "tests" / "test_b.py").unlink()
    assert bench.stale([module], root, record) == [("guard", "changed since its run: tests/test_b.py")]


def test_a_run_stopped_before_its_end_does_not_stand(tmp_path: Path) -> None:
    bench = _bench()
    root, record = tmp_path / "tree", tmp_path / "runs.json"
    _tree(root)
    module = bench.Module("guard", ("src/guard.py",), ("tests/test_b.py",))
    bench.record(module, bench.Figures(mutants=10, killed=4, not_checked=6), root, "2026-12-06 15:00 UTC", record)
    assert bench.stale([module], root, record) == [("guard", "6 mutants not run")]


def test_a_retest_runs_the_survivors_and_what_a_stopped_retest_left_unchecked() -> None:
    statuses = [("m.x_a__mutmut_1", "killed"), ("m.x_a__mutmut_2", "survived"), ("m.x_a__mutmut_3", "not checked"),
                ("m.x_a__mutmut_4", "not checked"), ("m.x_a__mutmut_5", "no tests"), ("m.x_a__mutmut_6", "timeout"),
                ("m.x_a__mutmut_7", "suspicious")]
    # 4 was killed by an earlier run (carried); 3 was a survivor the stopped retest never reached
    assert _bench().retest_names(statuses, {"m.x_a__mutmut_1", "m.x_a__mutmut_4"}) == [
        "m.x_a__mutmut_2", "m.x_a__mutmut_3", "m.x_a__mutmut_5", "m.x_a__mutmut_7"]


def test_every_configured_module_names_files_that_exist() -> None:
    bench = _bench()
    for module in bench.load_modules().values():
        missing = [name for name in bench.files_of(module, ROOT) if not (ROOT / name).is_file()]
        assert not missing, f"{module.name} names files that are not there: {missing}"
