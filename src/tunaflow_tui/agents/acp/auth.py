"""What an ACP agent says about signing in, turned into what the user should do."""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import AuthMethodAgent, EnvVarAuthMethod, TerminalAuthMethod

AuthMethod = EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent


def describe_method(method: AuthMethod) -> str:
    """One line for one sign-in method: its name and, for a key in a variable, the variable to set."""
    if isinstance(method, EnvVarAuthMethod) and method.vars:
        names = ", ".join(v.name for v in method.vars)
        return f"{method.name}: set {names}"
    if method.description:
        return f"{method.name}: {method.description}"
    return method.name


def auth_hint(methods: Sequence[AuthMethod] | None) -> str:
    """A sentence listing the agent's sign-in methods ("" when it reports none)."""
    if not methods:
        return ""
    return " Sign in with one of: " + "; ".join(describe_method(m) for m in methods) + "."
