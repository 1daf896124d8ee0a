"""`tunaflow parse` run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPLY = ("Plan below.\r\n<!-- tunaflow:plan-proposal -->\r\n# 캐시 추가\r\n## 서브태스크\r\n1. 저장\r\n2. 무효화\r\n"
         "<!-- /tunaflow:plan-proposal -->\r\n<!-- tunaflow:impl-complete -->\r\n")  # fmt: skip


def _parse(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", "parse", *args], input=stdin,
                          capture_output=True, timeout=60)  # fmt: skip


def test_parse_file_prints_markers_and_display_text_as_json(tmp_path: Path) -> None:
    reply = tmp_path / "reply.md"
    reply.write_bytes(REPLY.encode("utf-8"))
    out = _parse(str(reply))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.decode("utf-8"))
    assert data["display_text"] == "Plan below.\r\n"
    proposal, impl = data["markers"]
    assert proposal["kind"] == "plan-proposal" and proposal["accepted"] is True and proposal["closed"] is True
    assert proposal["title"] == "캐시 추가"
    assert proposal["subtasks"] == [{"index": 1, "title": "저장", "details": ""}, {"index": 2, "title": "무효화", "details": ""}]
    assert impl == {"kind": "impl-complete", "accepted": True}
    assert "캐시 추가" in out.stdout.decode("utf-8")  # not \\u-escaped


def test_role_scoping_from_the_command_line(tmp_path: Path) -> None:
    reply = tmp_path / "reply.md"
    reply.write_bytes(REPLY.encode("utf-8"))
    data = json.loads(_parse(str(reply), "--role", "developer").stdout)
    assert [(m["kind"], m["accepted"]) for m in data["markers"]] == [("plan-proposal", False), ("impl-complete", True)]
    assert "캐시 추가" in data["display_text"]


def test_stdin_with_invalid_utf8_does_not_crash() -> None:
    out = _parse("-", stdin=b"\xff\xfe oops <!-- tunaflow:subtask-done:4 -->")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["markers"] == [{"kind": "subtask-done", "accepted": True, "index": 4}]
    assert "\ufffd" in data["display_text"]


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    out = _parse(str(tmp_path / "nope.md"))
    assert out.returncode == 2, "a FILE that does not exist is a usage error"
    assert out.stdout == b""
    assert b"nope.md" in out.stderr and b"Traceback" not in out.stderr


def test_unknown_role_is_refused() -> None:
    out = _parse("-", "--role", "admin", stdin=b"")
    assert out.returncode == 2 and b"admin" in out.stderr
