"""Verdict aggregation: what the verdict card shows after a review round."""

from __future__ import annotations

import json

import pytest

from tunaflow_tui.core.workflow.verdicts import AggregateVerdict, SeatResult, aggregate


def seat(name: str, verdict: str | None, **kw: object) -> SeatResult:
    return SeatResult(seat=name, engine=kw.pop("engine", "claude"), verdict=verdict, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["pass", "pass"], "pass"),
        (["pass", "fail"], "fail"),
        (["conditional", "fail"], "fail"),
        (["pass", "conditional"], "conditional"),
        (["conditional"], "conditional"),
    ],
)
def test_any_fail_fails_all_pass_passes_else_conditional(verdicts: list[str], expected: str) -> None:
    result = aggregate([seat(f"s{i}", v) for i, v in enumerate(verdicts)])
    assert result.verdict == expected
    assert result.errors == ()


def test_errored_seat_is_left_out_not_counted_as_fail() -> None:
    result = aggregate(
        [
            seat("reviewer", "pass", scores={"code_quality": 4}, findings=("Missing docstring",)),
            seat("verifier", None, engine="codex", error="timed out after 600s", scores={"code_quality": 1},
                 findings=("should not appear",)),
        ]
    )
    assert result.verdict == "pass"
    assert result.errors == ("verifier",)
    assert result.findings == ("Missing docstring",)
    assert result.scores["code_quality"].n == 1
    assert result.scores["code_quality"].mean == 4


def test_seat_without_verdict_is_an_error_and_all_errors_give_no_verdict() -> None:
    result = aggregate([seat("reviewer", None), seat("verifier", "fail", error="crashed")])
    assert result.verdict is None
    assert result.errors == ("reviewer", "verifier")


def test_findings_deduplicated_ignoring_case_space_and_punctuation_keeping_order() -> None:
    result = aggregate(
        [
            seat("a", "fail", findings=("Tests do not cover the error path.", "Unused import in cli.py")),
            seat("b", "conditional", findings=("tests do not  cover the error path", "Naming is unclear",
                                               "unused import in cli py!")),
        ]
    )
    assert result.findings == ("Tests do not cover the error path.", "Unused import in cli.py", "Naming is unclear")


def test_scores_mean_and_spread_and_failed_subtasks_union() -> None:
    result = aggregate(
        [
            seat("a", "fail", scores={"plan_coverage": 2, "convention": 5}, failed_subtasks=(3, 1),
                 recommendations=("Add a test",)),
            seat("b", "fail", scores={"plan_coverage": 5}, failed_subtasks=(1, 2),
                 recommendations=("add a test", "Split the module")),
        ]
    )
    assert result.scores["plan_coverage"].mean == pytest.approx(3.5)
    assert result.scores["plan_coverage"].spread == 3
    assert result.scores["plan_coverage"].n == 2
    assert result.scores["convention"].spread == 0
    assert result.failed_subtasks == (1, 2, 3)
    assert result.recommendations == ("Add a test", "Split the module")


def test_json_round_trip_survives_json_encoding() -> None:
    original = aggregate(
        [
            seat("reviewer", "conditional", scores={"test_coverage": 3}, failed_subtasks=(2,),
                 findings=("x",), recommendations=("y",)),
            seat("verifier", None, engine="gemini", error="rate limited"),
        ]
    )
    restored = AggregateVerdict.from_json(json.loads(json.dumps(original.to_json())))
    assert restored == original
