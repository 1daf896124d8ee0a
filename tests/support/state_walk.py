"""A breadth-first walk of the workflow state machine, for tests that visit every state a plan can reach."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable

from tunaflow_tui.core.workflow import Actor, Command, IllegalTransition, PlanState, transition


def walk(commands: Iterable[Command], signature: Callable[[PlanState], Hashable], *,
         threshold: int) -> dict[Hashable, tuple[PlanState, tuple[Command, ...]]]:
    """Every distinct state (by ``signature``) reachable from a new plan with ``commands``, each given
    by an actor allowed to give it: the first state found for each signature and the shortest path to it."""
    commands = tuple(commands)
    seen: dict[Hashable, tuple[PlanState, tuple[Command, ...]]] = {signature(PlanState()): (PlanState(), ())}
    queue = deque([(PlanState(), ())])
    while queue:
        state, path = queue.popleft()
        for command in commands:
            actor = Actor.USER if Actor.USER in type(command).actors else Actor.AGENT
            try:
                nxt = transition(state, command, actor=actor, doom_threshold=threshold).state
            except IllegalTransition:
                continue
            key = signature(nxt)
            if key not in seen:
                seen[key] = (nxt, (*path, command))
                queue.append((nxt, (*path, command)))
    return seen
