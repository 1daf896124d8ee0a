"""One turn per conversation across processes: the lease row, raced for, taken over from the dead, fenced."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from waiting import until_sync

from tunaflow_tui.core.processes import start_ticks
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.leases import LeaseHolder, LeaseLost, TurnInProgress

SRC = str(Path(__file__).resolve().parents[3] / "src")

# A process that opens the project, waits for the go file, asks for main's lease, says how it went,
# and (if it won) starts a reply and holds the lease until the release file appears.
CONTENDER = textwrap.dedent("""
    import pathlib, sys, time
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.storage.leases import TurnInProgress
    project, go, release, out = map(pathlib.Path, sys.argv[1:5])
    store = Store.open(project)
    store.main_conversation()
    while not go.exists():
        time.sleep(0.005)
    try:
        lease = store.acquire_lease("main", role="architect")
    except TurnInProgress as exc:
        out.write_text("refused: " + str(exc))
        sys.exit(0)
    with store.fenced(lease):
        message = store.add_message("main", "assistant", "half an answer", status="streaming")
        store.attach_lease_message(lease, message.id)
    out.write_text("won")
    while not release.exists():
        time.sleep(0.005)
    store.release_lease(lease)
    store.close()
""")


def _contender(project: Path, tmp: Path, name: str) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp / f"{name}.out"
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen([sys.executable, "-c", CONTENDER, str(project), str(tmp / "go"),
                             str(tmp / "release"), str(out)], env=env)
    return proc, out


def test_two_processes_race_for_a_lease_and_one_wins(project_dir: Path, tmp_path: Path) -> None:
    Store.open(project_dir).close()
    racers = [_contender(project_dir, tmp_path, f"racer{n}") for n in range(2)]
    (tmp_path / "go").touch()
    until_sync(lambda: all(out.exists() for _proc, out in racers), "both racers to have tried")
    results = sorted(out.read_text() for _proc, out in racers)
    winner = next(proc for proc, out in racers if out.read_text() == "won")
    assert results[1] == "won" and results[0].startswith("refused: main has a turn in progress")
    assert f"(pid {winner.pid})" in results[0], "the refusal names the process that writes the turn"
    with Store.open(project_dir) as store:
        lease = store.live_lease("main")
        assert lease is not None and lease.holder.pid == winner.pid and lease.generation == 1
        with pytest.raises(TurnInProgress):
            store.acquire_lease("main")
    (tmp_path / "release").touch()
    for proc, _out in racers:
        assert proc.wait(timeout=60) == 0
    with Store.open(project_dir) as store:
        assert store.live_lease("main") is None, "a released lease is free"
        assert store.acquire_lease("main").generation == 2


def test_kill_9_of_the_holder_frees_the_lease_and_keeps_its_text(project_dir: Path, tmp_path: Path) -> None:
    Store.open(project_dir).close()
    holder, out = _contender(project_dir, tmp_path, "holder")
    (tmp_path / "go").touch()
    until_sync(out.exists, "the holder to take the lease")
    with Store.open(project_dir) as store:
        with pytest.raises(TurnInProgress):
            store.acquire_lease("main")
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        lease = store.acquire_lease("main", role="architect")
        assert lease.generation == 2 and lease.holder.pid == os.getpid()
        [left] = store.list_messages("main")
        assert (left.status, left.content) == ("interrupted", "half an answer"), "the dead holder's text is kept"


def test_a_start_time_mismatch_another_boot_or_a_silent_host_is_stale(store: Store) -> None:
    me = LeaseHolder.this_process()
    assert me.pid_start == start_ticks(os.getpid())
    impostor = replace(me, pid_start=(me.pid_start or 0) + 1)  # a new process under a recorded pid
    store.acquire_lease("main", holder=impostor)
    assert store.live_lease("main") is None
    taken = store.acquire_lease("main", holder=me)
    assert taken.generation == 2
    with pytest.raises(TurnInProgress):  # the same pid with its real start time is alive
        store.acquire_lease("main", holder=me)
    assert store.live_lease("main") == replace(taken, heartbeat_at=store.live_lease("main").heartbeat_at)  # type: ignore[union-attr]
    store.release_lease(taken)
    store.acquire_lease("main", holder=replace(me, boot_id="another-boot"))
    assert store.live_lease("main") is None, "a lease from before a reboot is stale"
    elsewhere = replace(me, host="other-host")
    remote = store.acquire_lease("main", holder=elsewhere)
    assert store.live_lease("main") is not None, "another host's lease with a fresh heartbeat is live"
    assert remote.is_stale(now=remote.heartbeat_at + 31), "and stale once its heartbeat is old"


def test_a_lost_lease_refuses_the_writes_of_its_turn(store: Store) -> None:
    me = LeaseHolder.this_process()
    old = store.acquire_lease("main", holder=replace(me, pid_start=(me.pid_start or 0) + 1))
    with store.fenced(old):
        reply = store.add_message("main", "assistant", "written under the old lease", status="streaming")
    store.attach_lease_message(old, reply.id)
    new = store.acquire_lease("main")  # the old holder looks gone: taken over
    assert store.get_message(reply.id).status == "interrupted"  # type: ignore[union-attr]
    assert not store.renew_lease(old), "the heartbeat tells the old holder it lost the lease"
    assert store.renew_lease(new)
    with pytest.raises(LeaseLost), store.fenced(old):
        store.update_message(reply.id, content="a late write from the old holder")
    assert store.get_message(reply.id).content == "written under the old lease"  # type: ignore[union-attr]
    store.release_lease(old)  # releasing a lost lease leaves the new holder's alone
    assert store.holds_lease(new)
