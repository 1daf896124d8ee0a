"""Ask an ACP agent who it is and whether it can open a session: for ``tunaflow doctor``.

The agent is started in a scratch folder, sent ``initialize`` and ``session/new`` (no prompt, so no
model is called and nothing is spent), and its process group is ended afterwards whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import acp
from acp.schema import ClientCapabilities, Implementation

from tunaflow_tui import __version__
from tunaflow_tui.agents.acp.auth import describe_method


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What the agent said: its name and version, its sign-in methods, and whether a session opened."""

    agent: str = ""
    auth_methods: tuple[str, ...] = ()
    session_ok: bool = False
    #: why the agent could not be asked, or why its session did not open ("" when it did)
    problem: str = ""
    needs_sign_in: bool = False
    stderr: str = field(default="", repr=False)


class _Silent:
    """A client that answers nothing: the probe sends no prompt, so the agent has nothing to ask."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Ignore updates (``available_commands_update`` and the like)."""

    def on_connect(self, conn: Any) -> None:
        """Nothing to keep."""


async def probe(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> ProbeResult:
    """Start ``argv``, ask it, end its process group; never raises for the agent's failures."""
    with tempfile.TemporaryDirectory(prefix="tunaflow-acp-probe-") as scratch:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=scratch, env=dict(env), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            return ProbeResult(problem=f"cannot be started: {exc.strerror or exc}")
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stderr = bytearray()

        async def drain() -> None:
            assert proc.stderr is not None
            while chunk := await proc.stderr.read(65536):
                stderr.extend(chunk[-4096:])
                del stderr[:-4096]

        drainer = asyncio.create_task(drain())
        conn = acp.connect_to_agent(cast(acp.Client, _Silent()), proc.stdin, proc.stdout)
        try:
            async with asyncio.timeout(timeout):
                return await _ask(conn, scratch)
        except TimeoutError:
            return ProbeResult(problem=f"did not answer within {timeout:g} s", stderr=_last(stderr))
        except (ConnectionError, BrokenPipeError, asyncio.IncompleteReadError):
            return ProbeResult(problem="closed the connection without answering", stderr=_last(stderr))
        except Exception as exc:  # a reply that is not ACP
            return ProbeResult(problem=f"did not speak ACP: {type(exc).__name__}: {exc}", stderr=_last(stderr))
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await proc.wait()
                    await conn.close()
            drainer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await drainer


async def _ask(conn: acp.core.ClientSideConnection, scratch: str) -> ProbeResult:
    init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities(),
                                 client_info=Implementation(name="tunaflow-doctor", version=__version__))
    info = init.agent_info
    agent = f"{info.title or info.name} {info.version}".strip() if info else ""
    methods = tuple(describe_method(m) for m in init.auth_methods or [])
    try:
        await conn.new_session(cwd=scratch, mcp_servers=[])
    except acp.RequestError as exc:
        return ProbeResult(agent, methods, session_ok=False, problem=str(exc), needs_sign_in=exc.code == -32000)
    return ProbeResult(agent, methods, session_ok=True)


def _last(data: bytearray) -> str:
    lines = bytes(data).decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1][:200] if lines else ""


def probe_sync(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> ProbeResult:
    """:func:`probe` from plain code (in a thread of its own, so a running event loop does not matter)."""
    found: list[ProbeResult] = []
    worker = threading.Thread(target=lambda: found.append(asyncio.run(probe(argv, env, timeout))), daemon=True)
    worker.start()
    worker.join(timeout + 10)
    return found[0] if found else ProbeResult(problem=f"did not answer within {timeout:g} s")
