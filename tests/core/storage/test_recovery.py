"""Crash recovery: a killed process leaves its streaming message interrupted, with its partial text."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tunaflow_tui.core.storage import Store

CRASHING_SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from tunaflow_tui.core.storage import Store
    store = Store.open(Path(sys.argv[1]))
    done = store.add_message("main", "user", "please fix the bug")
    msg = store.add_message("main", "assistant", "", engine="claude", status="streaming")
    store.update_message(msg.id, content="I will start by reading")
    store.update_message(msg.id, content="I will start by reading the handler and")
    print(done.id, msg.id, flush=True)
    time.sleep(60)
""")


def test_kill_9_leaves_an_interrupted_message_with_partial_text(project_dir: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", CRASHING_SCRIPT, str(project_dir)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        done_id, streaming_id = (int(x) for x in line.split())
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    with Store.open(project_dir) as store:
        assert store.recovered_message_ids == (streaming_id,)
        recovered = store.get_message(streaming_id)
        assert recovered is not None
        assert recovered.status == "interrupted"
        assert recovered.content == "I will start by reading the handler and"
        finished = store.get_message(done_id)
        assert finished is not None and (finished.status, finished.content) == ("done", "please fix the bug")
    with Store.open(project_dir) as again:
        assert again.recovered_message_ids == ()  # recovered once, not at every open
        assert again.get_message(streaming_id).status == "interrupted"  # type: ignore[union-attr]


def test_only_the_owner_treats_streaming_messages_as_left_behind(project_dir: Path) -> None:
    live = Store.open(project_dir)
    try:
        assert live.is_owner
        message = live.add_message("main", "assistant", "half an answer", status="streaming")
        # `tunaflow status`, an export, a second window: the message belongs to the live process
        with Store.open(project_dir) as other:
            assert not other.is_owner
            assert other.recovered_message_ids == ()
            assert other.get_message(message.id).status == "streaming"
        assert live.get_message(message.id).status == "streaming"
    finally:
        live.close()
    # the owner is gone (closed, or killed: the system drops its lock): the next one recovers
    with Store.open(project_dir) as next_owner:
        assert next_owner.is_owner
        assert next_owner.recovered_message_ids == (message.id,)
        assert next_owner.get_message(message.id).status == "interrupted"
