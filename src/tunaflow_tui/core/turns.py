"""What an agent turn reports besides its text: token usage and the tools it used.

Engines report these while a turn runs, the store keeps them with the reply, and the chat shows
them: one type each from the engine to the screen.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one turn, and its cost in USD when the engine reports one.

    ``context_used`` / ``context_size``: the tokens in the agent's context window and the window's size,
    from agents that report them while they work (ACP's ``usage_update``); 0 when not reported.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None
    context_used: int = 0
    context_size: int = 0


@dataclass(frozen=True, slots=True)
class ToolLine:
    """A tool an agent used during a turn: its name and what it worked on (e.g. ``Edit``, ``src/app.py``)."""

    name: str
    detail: str = ""
