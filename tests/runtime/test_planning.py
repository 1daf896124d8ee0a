"""Which plan chat turns are about: found with one plan read, however many plans the project has."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tunaflow_tui.core.storage import Store, plans
from tunaflow_tui.runtime import planning


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path) as opened:
        yield opened


def test_the_active_plan_is_the_newest_that_still_moves_and_only_it_is_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(50):
        store.create_plan(title=f"Plan {n}", slug=f"plan-{n}", phase="done", subtasks=[("a", ""), ("b", "")])
    drafting = store.create_plan(title="Drafting", slug="drafting", phase="drafting")
    store.create_plan(title="Dropped", slug="dropped", phase="abandoned")
    read: list[int] = []
    real = plans.plan_record

    def counting(row, subtasks):  # type: ignore[no-untyped-def]
        read.append(row["id"])
        return real(row, subtasks)

    monkeypatch.setattr(plans, "plan_record", counting)
    rt = SimpleNamespace(store=store)
    assert planning.active_plan(rt) == drafting  # type: ignore[arg-type]
    assert planning.plan_in_drafting(rt) == drafting  # type: ignore[arg-type]
    assert read == [drafting.id, drafting.id]


def test_no_active_plan_when_every_plan_is_finished(store: Store) -> None:
    store.create_plan(title="Done", slug="done", phase="done")
    assert planning.active_plan(SimpleNamespace(store=store)) is None  # type: ignore[arg-type]
    assert planning.plan_in_drafting(SimpleNamespace(store=store)) is None  # type: ignore[arg-type]
