"""The ACP engine's stand-in agent for tests: captures to replay and compose, and a rig that runs it."""

from __future__ import annotations

import copy
import json
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tunaflow_tui.agents.acp.acp_engine import AcpEngine
from tunaflow_tui.agents.agent_events import EngineEvent
from tunaflow_tui.agents.base import PermissionProfile, Turn, TurnRequest
from tunaflow_tui.agents.permissions import PermissionBroker
from tunaflow_tui.core.settings import Settings
from tunaflow_tui.core.settings.engines import EngineConfig

#: real captures of claude-code-acp, codex-acp and gemini --acp (see docs: agent CLIs, ACP)
CAPTURES = Path(__file__).resolve().parents[1] / "fakes" / "streams" / "acp"
FAKE_AGENT = Path(__file__).resolve().parents[1] / "fakes" / "acp_agent.py"


def capture(name: str) -> list[dict[str, Any]]:
    """The lines of one real capture (``claude-fake-write-allow`` …), as dicts."""
    return [json.loads(line) for line in (CAPTURES / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def until_prompt(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The capture's lines up to and including the client's ``session/prompt``."""
    for i, entry in enumerate(entries):
        if entry["dir"] == "->" and entry["msg"].get("method") == "session/prompt":
            return copy.deepcopy(entries[: i + 1])
    raise AssertionError("no session/prompt in the capture")


def session_id(entries: list[dict[str, Any]]) -> str:
    """The session id the capture's ``session/new`` returned."""
    for entry in entries:
        result = entry["msg"].get("result")
        if entry["dir"] == "<-" and isinstance(result, dict) and "sessionId" in result:
            return str(result["sessionId"])
    raise AssertionError("no session in the capture")


def chunk(sid: str, text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    """An agent→client text chunk line, shaped as in the captures."""
    return {"t": 0, "dir": "<-", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": sid, "update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}}}}}


def result(request_id: int, value: Any) -> dict[str, Any]:
    """An agent→client response line."""
    return {"t": 0, "dir": "<-", "msg": {"jsonrpc": "2.0", "id": request_id, "result": value}}


def expect(method: str, request_id: int | None = None) -> dict[str, Any]:
    """A client→agent line the fake waits for (a notification when ``request_id`` is None)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {}}
    if request_id is not None:
        msg["id"] = request_id
    return {"t": 0, "dir": "->", "msg": msg}


def answer_from_client(request_id: int) -> dict[str, Any]:
    """Wait for the client's answer to the fake's own request ``request_id``."""
    return {"t": 0, "dir": "->", "msg": {"jsonrpc": "2.0", "id": request_id, "result": None}}


def act(what: str, **args: Any) -> dict[str, Any]:
    """A hostile directive for the fake (see fake_acp_agent.py)."""
    return {"t": 0, "dir": "!", "do": what, **args}


@dataclass
class AcpRig:
    """One test's stand-in agent: its capture, its log, and the folder the turn works in."""

    root: Path
    cwd: Path
    subst: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> Path:
        return self.root / "acp-log.jsonl"

    def engine(self, entries: Iterable[dict[str, Any]], **config: Any) -> AcpEngine:
        """An engine whose agent replays ``entries``."""
        path = self.root / f"capture-{len(list(self.root.glob('capture-*')))}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in entries))
        env = {"FAKE_ACP_CAPTURE": str(path), "FAKE_ACP_LOG": str(self.log),
               "FAKE_ACP_SUBST": json.dumps(self.subst)}
        settings: dict[str, Any] = {"timeout_idle_s": 30, "timeout_total_s": 120, **config}
        return AcpEngine(EngineConfig(name="fake-acp", type="acp", command=shlex.join([sys.executable, str(FAKE_AGENT)]),
                                      env=env, **settings))

    def request(self, *, role: str = "developer", profile: PermissionProfile = PermissionProfile.EDIT,
                resume: str | None = None, broker: PermissionBroker | None = None,
                prompt: str = "write file") -> TurnRequest:
        """A turn request in the rig's folder."""
        return TurnRequest(prompt=prompt, cwd=self.cwd, role=role, profile=profile, resume_session_id=resume,
                           permissions=broker)

    def received(self) -> list[dict[str, Any]]:
        """Every message the agent received, oldest first."""
        if not self.log.exists():
            return []
        return [json.loads(line)["recv"] for line in self.log.read_text().splitlines() if "recv" in line]

    def logged(self, key: str) -> list[Any]:
        """Values the fake logged under ``key`` (e.g. ``child``)."""
        if not self.log.exists():
            return []
        return [e[key] for line in self.log.read_text().splitlines() if key in (e := json.loads(line))]

    def answers(self) -> list[dict[str, Any]]:
        """The client's responses to the agent's own requests (permission outcomes, file contents)."""
        return [m for m in self.received() if "method" not in m]


async def collect(turn: Turn) -> list[EngineEvent]:
    """Every event of a turn, terminal one included."""
    return [event async for event in turn]


def with_acp_engine(settings: Settings, root: Path, entries: Iterable[dict[str, Any]], *, name: str = "claude-acp",
                    roles: tuple[str, ...] = ("architect",), subst: dict[str, str] | None = None,
                    **config: Any) -> tuple[Settings, Path]:
    """``settings`` with an ACP engine ``name`` whose stand-in agent replays ``entries``, playing ``roles``;
    and the log of what the agent received (read it with :func:`received_in`)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}-capture.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    log = root / f"{name}-log.jsonl"
    env = {"FAKE_ACP_CAPTURE": str(path), "FAKE_ACP_LOG": str(log), "FAKE_ACP_SUBST": json.dumps(subst or {})}
    engine = EngineConfig(name=name, type="acp", command=shlex.join([sys.executable, str(FAKE_AGENT)]), env=env,
                          **{"timeout_idle_s": 30, "timeout_total_s": 120, **config})
    chosen = settings.roles.model_copy(update={role: name for role in roles})
    return settings.model_copy(update={"engines": {**settings.engines, name: engine}, "roles": chosen}), log


def received_in(log: Path) -> list[dict[str, Any]]:
    """Every message the stand-in agent writing ``log`` received, oldest first."""
    if not log.exists():
        return []
    return [json.loads(line)["recv"] for line in log.read_text().splitlines() if '"recv"' in line]


def permission_answers(log: Path) -> list[dict[str, Any]]:
    """The outcomes the client sent for the agent's permission requests, in order."""
    return [m["result"]["outcome"] for m in received_in(log)
            if "method" not in m and isinstance(m.get("result"), dict) and "outcome" in m["result"]]
