"""Write failures become a StorageError with a human message, and leave nothing half-written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import tunaflow_tui
from tunaflow_tui.core.storage import StorageError, Store

READ_ONLY_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tunaflow_tui.core.storage import StorageError, Store
    try:
        with Store.open(Path(sys.argv[1])) as store:
            print("read:" + "|".join(m.content for m in store.list_messages("main")))
            store.add_message("main", "user", "must fail")
    except StorageError as exc:
        print("StorageError:" + str(exc))
    else:
        print("no error")
""")


def _skip_unless_python_runs_as(setpriv: list[str], env: dict[str, str], cwd: Path) -> None:
    """Skip when the unprivileged user cannot run this Python with tunaflow (e.g. a venv under /root)."""
    probe = subprocess.run([*setpriv, sys.executable, "-c", "import tunaflow_tui.core.storage"],
                           capture_output=True, text=True, timeout=60, env=env, cwd=cwd)
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
        pytest.skip(f"the Python environment ({sys.prefix}) is not readable by the unprivileged user "
                    f"(uid 65534) the check runs as: {reason}")


def test_a_read_only_database_file_gives_a_storage_error() -> None:
    # Permissions do not bind root, so as root the check runs in a process of an unprivileged user.
    base = Path(tempfile.mkdtemp(prefix="tunaflow-ro-"))
    try:
        project = base / "proj"
        project.mkdir()
        with Store.open(project) as store:
            store.add_message("main", "user", "saved earlier")
        for path in (base, project, project / ".tunaflow"):
            path.chmod(0o777)
        (project / ".tunaflow" / "state.db").chmod(0o444)
        src = str(Path(tunaflow_tui.__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": src}
        command = [sys.executable, "-c", READ_ONLY_SCRIPT, str(project)]
        if os.getuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.skip("running as root without setpriv: file permissions cannot be exercised")
            command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *command]
            _skip_unless_python_runs_as(command[:4], env, base)
        out = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=base)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines == ["read:saved earlier", f"StorageError:The project is read-only ({project / '.tunaflow'} or "
                         "state.db is not writable by this user): tunaflow can show it but not change it."]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_disk_full_raises_storage_error_and_rolls_back(store: Store) -> None:
    store.add_message("main", "user", "before")
    conn = store._db.writer_connection  # cap the file size to make SQLite report a full disk
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(StorageError, match="disk is full"), store.transaction():
        store.add_message("main", "user", "small one")
        store.add_message("main", "assistant", "x" * 200_000)
    assert [m.content for m in store.list_messages("main")] == ["before"]
    assert store.search_messages("small") == ()
    conn.execute("PRAGMA max_page_count = 1073741823")
    store.add_message("main", "user", "after space was freed")
    assert store.count_messages("main") == 2


def test_a_constraint_failure_is_a_storage_error_and_writes_nothing(store: Store) -> None:
    with pytest.raises(StorageError, match="refused"):
        store.create_branch(conversation_id="main", checkpoint_id=999, parent_branch_id=None,
                            mode="chat", kind="general", label="bad checkpoint")
    assert store.list_branches() == ()
    assert store.get_conversation("branch:1") is None
