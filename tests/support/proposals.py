"""Architect replies carrying a plan proposal, for the tests of several plans in flight."""

from __future__ import annotations


def proposal(title: str, *subtasks: str, revises: int | None = None) -> str:
    """A reply with one proposal titled ``title`` (``revises``: the plan its opening marker names)."""
    opener = f"<!-- tunaflow:plan-proposal revises: #{revises} -->" if revises else "<!-- tunaflow:plan-proposal -->"
    items = "\n".join(f"{i}. {s}" for i, s in enumerate(subtasks or ("Do it",), 1))
    return (f"Here is the plan.\n\n{opener}\ntitle: {title}\n\nsubtasks:\n{items}\n\n"
            "description: As asked.\n<!-- /tunaflow:plan-proposal -->\n")
