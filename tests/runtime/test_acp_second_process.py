"""An ACP agent's session belongs to the conversation, not to the process: another `tunaflow ask` resumes it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from acp_rig import FAKE_AGENT, capture, chunk, expect, result, session_id, until_prompt
from runtime_harness import Harness

pytestmark = pytest.mark.e2e


def _ask(h: Harness, text: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "TUNAFLOW_ROLES__ARCHITECT": "claude-acp"}
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", "ask", text], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, env=env, cwd=h.project)


def _write(path: Path, entries: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return str(path)


def test_a_second_process_resumes_the_session_the_first_one_started(harness: Harness, tmp_path: Path) -> None:
    first = until_prompt(capture("claude-fake-ok"))
    sid = session_id(first)
    first += [chunk(sid, "first answer"), result(3, {"stopReason": "end_turn"})]
    second = [*capture("claude-fake-ok")[:2], expect("session/resume", 2), result(2, {}),
              expect("session/prompt", 3), chunk(sid, "second answer"), result(3, {"stopReason": "end_turn"})]
    captures = os.pathsep.join([_write(tmp_path / "turn1.jsonl", first), _write(tmp_path / "turn2.jsonl", second)])
    log = tmp_path / "acp.jsonl"
    command = shlex.join([sys.executable, str(FAKE_AGENT)])
    harness.write_config(
        f"\n[engines.claude-acp]\ntype = \"acp\"\ncommand = {json.dumps(command)}\ntimeout_idle_s = 30\n"
        f"env = {{ FAKE_ACP_CAPTURE = {json.dumps(captures)}, FAKE_ACP_LOG = {json.dumps(str(log))} }}\n")

    one = _ask(harness, "What does calc do?")
    assert one.returncode == 0, one.stderr
    assert "first answer" in one.stdout
    two = _ask(harness, "And what is missing?")
    assert two.returncode == 0, two.stderr
    assert "second answer" in two.stdout

    received = [json.loads(line)["recv"] for line in log.read_text().splitlines() if '"recv"' in line]
    resumed = [m["params"] for m in received if m.get("method") == "session/resume"]
    assert [(p["sessionId"], p["cwd"]) for p in resumed] == [(sid, str(harness.project.resolve()))]
    prompts = [m["params"]["prompt"] for m in received if m.get("method") == "session/prompt"]
    assert "And what is missing?" in prompts[1][-1]["text"]
    assert "What does calc do?" not in prompts[1][-1]["text"]  # the resumed session has it already
