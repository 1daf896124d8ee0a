"""Numbers in an engine's JSON may be anything: only real integers count."""

from __future__ import annotations

import pytest

from tunaflow_tui.agents.json_fields import as_int, token_count


@pytest.mark.parametrize(("value", "expected"), [
    (7, 7), (0, 0), (-9, -9), (True, 0), (False, 0), (3.5, 0), ("12", 0), (None, 0), ([1], 0), ({"n": 1}, 0),
])
def test_as_int_takes_only_integers(value: object, expected: int) -> None:
    assert as_int(value) == expected


@pytest.mark.parametrize(("value", "expected"), [(1200, 1200), (0, 0), (-5, 0), (True, 0), ("300", 0), (None, 0)])
def test_a_token_count_is_never_negative_or_borrowed_from_another_type(value: object, expected: int) -> None:
    assert token_count(value) == expected
