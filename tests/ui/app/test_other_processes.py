"""The app beside another tunaflow process: it follows the turn that process writes, without a keystroke.

A real `tunaflow ask` runs in a subprocess with the scripted stand-in agent, which streams half its
answer and waits at a gate until the test opens it. The app is opened while that turn runs, as the
project's owner (the process that owned it first has closed): the half-written reply is a live turn,
not one a crash left behind, and the rest of it appears as the other process writes it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from app_harness import screen_text
from runtime_harness import Harness, make_harness
from waiting import until, until_sync

from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.runtime import WorkflowRuntime
from tunaflow_tui.subcommands.open_command import build_app

FIRST = "The first half of the answer, written before the gate."
SECOND = "The second half, written by the other process after it."


@pytest.fixture
def harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    h = make_harness(tmp_path, monkeypatch)
    gate = {"after": FIRST + "\n\n", "started": str(tmp_path / "started"), "release": str(tmp_path / "release")}
    h.set_script(architect=[{"text": f"{FIRST}\n\n{SECOND}", "gate": gate}])
    h.write_config(idle_s=600)  # the stand-in waits at its gate as long as the test needs
    return h


def _streaming_reply(store: Store) -> int | None:
    replies = [m for m in store.list_messages("main") if m.role == "assistant"]
    return replies[-1].id if replies and FIRST in replies[-1].content else None


async def test_a_reopened_app_follows_the_turn_another_process_writes(harness: Harness) -> None:
    first_owner = Store.open(harness.project)  # the app that was open when `ask` started
    asking = subprocess.Popen([sys.executable, "-m", "tunaflow_tui", "ask", "what now?"], cwd=harness.project,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    try:
        until_sync(lambda: ((harness.root / "started").exists() and _streaming_reply(first_owner) is not None)
                   or asking.poll() is not None, "the other process's reply to be half written")
        assert asking.poll() is None, asking.communicate()
        reply_id = _streaming_reply(first_owner)
        first_owner.close()  # the app is closed; it is opened again while `ask` still writes

        runtime = WorkflowRuntime(harness.project, harness.settings())
        try:
            assert runtime.store.is_owner and runtime.store.recovered_message_ids == ()
            assert runtime.store.get_message(reply_id).status == "streaming"  # type: ignore[arg-type, union-attr]
            assert runtime.interrupted_plans() == ()
            app = build_app(runtime, notes=(), cursor_blink=False)
            async with app.run_test(size=(120, 40)) as pilot:
                await until(pilot, lambda: FIRST in screen_text(app), "the half-written reply on screen", limit=60)
                block = app.chat_view.block_for(reply_id)  # type: ignore[arg-type]
                assert block is not None and block.is_streaming, "shown as running, not interrupted"
                assert "interrupted" not in screen_text(app).lower()
                (harness.root / "release").touch()  # no key is pressed from here on
                await until(pilot, lambda: SECOND in screen_text(app), "the rest of the reply, without a keystroke", limit=60)
                await until(pilot, lambda: not app.chat_view.block_for(reply_id).is_streaming,  # type: ignore[arg-type, union-attr]
                            "the reply shown as finished")
        finally:
            runtime.close()
        out, err = asking.communicate(timeout=120)
        assert asking.returncode == 0, err
        assert SECOND in out
    finally:
        (harness.root / "release").touch()
        if asking.poll() is None:
            asking.kill()
            asking.wait()
        first_owner.close()


async def test_the_app_refuses_to_adopt_or_delete_a_branch_another_process_writes(harness: Harness) -> None:
    from app_harness import posted
    from branch_seeds import fork_seeded, open_in_pane, seed_branch, seed_main, thread

    seeding = WorkflowRuntime(harness.project, harness.settings())
    try:
        branch_id = fork_seeded(seeding, seed_main(seeding)[1], "other terminal")
        seed_branch(seeding, branch_id)
    finally:
        seeding.close()
    asking = subprocess.Popen([sys.executable, "-m", "tunaflow_tui", "ask", "and then?", "--to", str(branch_id)],
                              cwd=harness.project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    runtime = WorkflowRuntime(harness.project, harness.settings())
    try:
        until_sync(lambda: (harness.root / "started").exists() or asking.poll() is not None, "the gate")
        assert asking.poll() is None, asking.communicate()
        app = build_app(runtime, notes=(), cursor_blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await open_in_pane(pilot, app, branch_id)
            await until(pilot, lambda: "The first half" in screen_text(app), "the half-written reply in the pane",
                        limit=60)
            busy = f"branch {branch_id} has a turn in progress (pid {asking.pid}) — wait for it or cancel it"
            app.controller.branches.requested(f"branch:{branch_id}", "adopt")  # the adopt key / palette entry
            await until(pilot, lambda: any(busy in str(n.message).lower() for n in posted(app)),
                        "the adopt refused", limit=60)
            assert runtime.store.get_branch(branch_id).status == "active"  # type: ignore[union-attr]
            (harness.root / "release").touch()  # no key is pressed from here on
            await until(pilot, lambda: "The second half" in screen_text(app), "the rest of the reply in the pane",
                        limit=60)
            assert thread(app) is not None
        _out, err = asking.communicate(timeout=120)
        assert asking.returncode == 0 and "Traceback" not in err, err
        replies = runtime.store.list_messages(f"branch:{branch_id}")
        assert replies[-1].content == f"{FIRST}\n\n{SECOND}" and replies[-1].status == "done", "nothing lost"
    finally:
        (harness.root / "release").touch()
        if asking.poll() is None:
            asking.kill()
            asking.wait()
        runtime.close()


ABANDON_ELSEWHERE = """
import sys
from pathlib import Path
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import Abandon
from tunaflow_tui.core.workflow.service import WorkflowService
with Store.open(Path(sys.argv[1])) as store:
    [plan] = store.list_plans()
    WorkflowService(store).apply(plan.id, Abandon(reason="done from another terminal"), actor="user")
"""


async def test_a_plan_decided_in_another_process_updates_its_card_without_a_keystroke(open_app, at_approval) -> None:
    from app_harness import settle

    app, _session, runtime = open_app(project=at_approval)
    [plan] = runtime.store.list_plans()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.decision_dock.card_for(plan.id) is not None and "abandoned" not in screen_text(app)
        done = subprocess.run([sys.executable, "-c", ABANDON_ELSEWHERE, str(at_approval)], capture_output=True,
                              text=True, timeout=120, env=os.environ.copy())
        assert done.returncode == 0, done.stderr
        # the card folds to its title, which says so (the sidebar's "[abandoned]" is another place)
        await until(pilot, lambda: "abandoned" in screen_text(app).replace("[abandoned]", ""), "the card marked abandoned",
                    limit=60)
        await until(pilot, lambda: "[abandoned]" in screen_text(app), "the sidebar following too")  # drawn after the card
        assert runtime.store.get_plan(plan.id).phase == "abandoned"  # type: ignore[union-attr]


async def test_a_look_at_the_database_that_fails_half_way_is_taken_again(harness: Harness,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from tunaflow_tui.controllers.follower import ExternalWrites
    from tunaflow_tui.core.storage import StorageError

    real_catch_up = ExternalWrites.catch_up
    failures = []

    async def busy_once(self: ExternalWrites) -> None:
        if not failures:
            failures.append("busy")
            raise StorageError("The project database is busy.")
        await real_catch_up(self)

    monkeypatch.setattr(ExternalWrites, "catch_up", busy_once)
    runtime = WorkflowRuntime(harness.project, harness.settings())
    try:
        app = build_app(runtime, notes=(), cursor_blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "No messages yet" in screen_text(app), "the empty chat")
            with Store.open(harness.project) as elsewhere:  # another terminal writes once, then nothing more
                elsewhere.add_message("main", "user", "written in another terminal")
            await until(pilot, lambda: "written in another terminal" in screen_text(app),
                        "the other terminal's message, after the look that failed", limit=60)
            assert failures == ["busy"]
    finally:
        runtime.close()
