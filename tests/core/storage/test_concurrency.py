"""One writer, many threads and processes: nothing lost, readers never blocked, groups are atomic."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.workflow import PlanEventType


def test_writes_from_many_threads_lose_nothing(store: Store) -> None:
    def write(worker: int) -> list[int]:
        ids = []
        for n in range(60):
            msg = store.add_message("main", "assistant", f"w{worker} n{n}", status="streaming")
            store.update_message(msg.id, content=f"w{worker} n{n} done", status="done")
            ids.append(msg.id)
        return ids

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(write, range(8)))
    all_ids = [i for ids in results for i in ids]
    assert len(set(all_ids)) == 480
    messages = store.list_messages("main", limit=1000)
    assert len(messages) == 480 == store.count_messages("main")
    assert {m.content for m in messages} == {f"w{w} n{n} done" for w in range(8) for n in range(60)}
    assert all(m.status == "done" for m in messages)


def test_an_exception_inside_a_transaction_rolls_everything_back(store: Store) -> None:
    store.add_message("main", "user", "kept")
    with pytest.raises(RuntimeError), store.transaction():
        store.add_message("main", "user", "lost 1")
        store.create_plan(title="Lost", slug="lost")
        store.set_native_session("main", "claude", "lost-session")
        raise RuntimeError("boom")
    assert [m.content for m in store.list_messages("main")] == ["kept"]
    assert not store.slug_taken("lost")
    assert store.get_conversation("main").native_session_id is None  # type: ignore[union-attr]


def test_nested_transactions_and_reads_inside_see_own_writes(store: Store) -> None:
    with store.transaction():
        plan = store.create_plan(title="P", slug="p")
        assert store.get_plan(plan.id) == plan  # a read inside the group sees the uncommitted plan
        with store.transaction():
            store.add_plan_event(plan.id, PlanEventType.DEV_STARTED, "system")
        assert len(store.list_plan_events(plan.id)) == 1
    assert len(store.list_plan_events(plan.id)) == 1


def test_other_threads_read_committed_data_during_a_write_group(store: Store) -> None:
    store.add_message("main", "user", "committed")
    inside = threading.Event()
    release = threading.Event()
    seen: list[list[str]] = []

    def long_writer() -> None:
        with store.transaction():
            store.add_message("main", "user", "pending")
            inside.set()
            release.wait(10)

    writer = threading.Thread(target=long_writer)
    writer.start()
    assert inside.wait(10)
    try:
        # reads in this thread neither wait for the writer nor see its uncommitted message
        seen.append([m.content for m in store.list_messages("main")])
        seen.append([h.message.content for h in store.search_messages("committed")])
    finally:
        release.set()
        writer.join(10)
    assert seen == [["committed"], ["committed"]]
    assert [m.content for m in store.list_messages("main")] == ["committed", "pending"]


def test_a_write_from_another_thread_waits_for_the_group_then_succeeds(store: Store) -> None:
    order: list[str] = []
    started = threading.Event()

    def other() -> None:
        started.set()
        store.add_message("main", "user", "second")
        order.append("other wrote")

    with store.transaction():
        store.add_message("main", "user", "first")
        thread = threading.Thread(target=other)
        thread.start()
        assert started.wait(10)
        thread.join(0.3)
        assert thread.is_alive()  # held back by the open group
        order.append("group ends")
    thread.join(10)
    assert order == ["group ends", "other wrote"]
    assert [m.content for m in store.list_messages("main")] == ["first", "second"]


READER_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tunaflow_tui.core.storage import Store
    with Store.open(Path(sys.argv[1])) as store:
        print("|".join(m.content for m in store.list_messages("main")))
        print(store.count_messages("main"))
""")


def test_a_reader_process_is_not_blocked_by_a_long_write_transaction(project_dir: Path) -> None:
    with Store.open(project_dir) as store:
        store.add_message("main", "user", "visible")
        with store.transaction():
            store.add_message("main", "user", "not yet committed")
            # the other process opens the store and reads while this transaction is open
            out = subprocess.run([sys.executable, "-c", READER_SCRIPT, str(project_dir)],
                                 capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["visible", "1"]
        assert store.count_messages("main") == 2


WRITER_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tunaflow_tui.core.storage import Store
    with Store.open(Path(sys.argv[1])) as store:
        for n in range(100):
            store.add_message("main", "user", f"{sys.argv[2]}-{n}")
""")


def test_two_processes_writing_lose_nothing(project_dir: Path) -> None:
    Store.open(project_dir).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(project_dir), name])
             for name in ("a", "b")]
    assert [p.wait(60) for p in procs] == [0, 0]
    with Store.open(project_dir) as store:
        contents = {m.content for m in store.list_messages("main", limit=500)}
    assert contents == {f"{name}-{n}" for name in ("a", "b") for n in range(100)}


_CLOSED_WHILE_READ = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    from tunaflow_tui.core.storage.access import DatabaseAccess

    access = DatabaseAccess(Path(sys.argv[1]))
    access.connect()
    started = threading.Event()
    result = {}

    def row(x):
        started.set()
        return x

    def read():
        try:
            with access.reading() as db:
                db.connection().create_function("row", 1, row)
                cursor = db.execute_sql("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                                        "WHERE x < 400000) SELECT count(row(x)) FROM c")
                result["count"] = cursor.fetchone()[0]
        except Exception as exc:
            result["error"] = repr(exc)

    reader = threading.Thread(target=read)
    reader.start()
    started.wait(60)
    access.close()  # the app quitting while a worker thread still reads
    reader.join()
    print(result)
""")


def test_closing_while_another_thread_reads_waits_for_the_read_instead_of_crashing(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", _CLOSED_WHILE_READ, str(tmp_path / "state.db")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"the process died ({proc.returncode}): {proc.stderr[-2000:]}"
    assert proc.stdout.strip() == "{'count': 400000}"
