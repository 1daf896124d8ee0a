"""The demo engine on a project that is not the bundled sample: an honest plan it can carry out anywhere.

The demo engine reads no code and writes no real feature.  On the user's own repository it does not
pretend to: it proposes to add one Markdown note, ``TUNAFLOW_DEMO.md``, listing the project's
top-level files and folders (which it really reads) and saying what the demo engine is, so the
whole cycle — plan, approval, a branch in its own worktree, tests, two reviews, merge — runs for
real on the user's project.  The note is one file, easy to delete or never merge.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from tunaflow_tui.agents.agent_events import EngineEvent, ToolLine, ToolUse

Step = EngineEvent | str

NOTE_PATH = "TUNAFLOW_DEMO.md"
NOTE_HEADING = "# tunaflow demo note"
LAYOUT_HEADING = "## What is at the top of this project"
ABOUT_HEADING = "## About this note"
SKIPPED = frozenset({".git", ".tunaflow", NOTE_PATH, "__pycache__", ".DS_Store"})
MAX_ENTRIES = 40


def plan_title(project: str) -> str:
    """The generic plan's title, naming the project."""
    return f"Add a demo note ({NOTE_PATH}) to {project}"


SUBTASKS: tuple[str, ...] = (
    f"Create `{NOTE_PATH}` at the top of the project with a list of the project's top-level files "
    "and folders (the Developer reads them; `.git` and `.tunaflow` are left out).",
    f"Add an “About this note” section to `{NOTE_PATH}` saying that tunaflow's demo engine wrote it, "
    "that it changes nothing else, and that it can be deleted.",
)

CHAT_REPLY = (
    "I'm the demo Architect. I don't read or change your code: the demo engine is scripted, so on "
    "your own project the only plan I can really carry out is a small one — adding a note, "
    f"`{NOTE_PATH}`, that lists what is at the top of the project. It lets you try the whole cycle "
    "(approve, a branch in its own worktree, tests, two reviews, merge) on your repository. "
    "Ask me for a plan to see it; configure a real engine (`tunaflow doctor` lists them) for real work."
)


def top_level(root: Path) -> list[str]:
    """The names at the top of ``root`` (folders end in ``/``), sorted, without tunaflow's and git's own."""
    names: list[str] = []
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name.lower())
    except OSError:
        return names
    for entry in entries:
        if entry.name in SKIPPED:
            continue
        names.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
    return names


def note(root: Path, *, about: bool = True) -> str:
    """The note's text for ``root``: the layout section, and the about section when ``about``."""
    names = top_level(root)
    listed = "\n".join(f"- `{name}`" for name in names[:MAX_ENTRIES]) or "- (nothing yet)"
    if len(names) > MAX_ENTRIES:
        listed += f"\n- … and {len(names) - MAX_ENTRIES} more"
    text = f"{NOTE_HEADING}\n\n{LAYOUT_HEADING}\n\n{listed}\n"
    if about:
        text += (f"\n{ABOUT_HEADING}\n\ntunaflow's demo engine wrote this file while you tried tunaflow on "
                 "this project. It changed nothing else. Delete the file, or do not merge its branch.\n")
    return text


def architect(project: Path, revisions: list[str]) -> Iterator[Step]:
    """A plan proposal for any project: the demo note."""
    yield ToolUse(ToolLine("Read", "."), "completed")
    title = plan_title(project.name)
    intro = ("Here is a plan I can really carry out on this project. The demo engine does not read or "
             "change your code, so it adds one small note instead — enough to try the whole cycle.")
    constraints = ["- Touch no other file.", "- Keep every existing test passing."]
    if revisions:
        number = len(revisions) + 1
        feedback = next((text.strip() for text in reversed(revisions) if text.strip()), "")
        feedback = " ".join(feedback.split())[:200] or "the review findings"
        intro = (f"Revision {number}: this version takes in the feedback — “{feedback}” — as far as the "
                 "demo engine can: it still only writes the note.")
        constraints.append(f"- Revision {number}: {feedback}")
    subtasks = "\n".join(f"{index}. {text}" for index, text in enumerate(SUBTASKS, start=1))
    yield (
        f"{intro}\n\n"
        "<!-- tunaflow:plan-proposal -->\n"
        f"title: {title}\n\n"
        f"subtasks:\n{subtasks}\n\n"
        f"description: tunaflow's demo engine plays every role from a script; it cannot implement a real "
        f"change in {project.name}. This plan adds `{NOTE_PATH}`, a note it can really write, so the "
        "approval, the isolated worktree, the test run, the two reviews and the merge all happen for real.\n\n"
        f"expected outcome: `{NOTE_PATH}` lists the project's top-level files and folders and says what "
        "wrote it; nothing else changes.\n\n"
        "constraints:\n" + "\n".join(constraints) + "\n\n"
        "non-goals:\n- Any change to the project's code, tests or configuration.\n"
        "<!-- /tunaflow:plan-proposal -->\n\n"
        "Approve it, or ask for a revision, on the plan's card: its keys are named there."
    )


def _write(root: Path, content: str, tool: str) -> Iterator[Step]:
    target = root / NOTE_PATH
    yield ToolUse(ToolLine(tool, NOTE_PATH), "started")
    target.write_text(content, encoding="utf-8")
    yield ToolUse(ToolLine(tool, NOTE_PATH), "completed")


def developer(prompt: str, root: Path) -> Iterator[Step]:
    """Write the note in ``root`` (the plan's worktree), subtask by subtask, or again after a review."""
    if "review findings:" in prompt.lower():
        yield "Reworking after review: writing the note again from the project as it is now.\n\n"
        yield from _write(root, note(root), "Edit" if (root / NOTE_PATH).is_file() else "Write")
        yield "<!-- tunaflow:impl-complete -->\n"
        return
    yield ToolUse(ToolLine("Read", "."), "completed")
    yield f"Subtask 1: listing the top-level files and folders in `{NOTE_PATH}`.\n\n"
    yield from _write(root, note(root, about=False), "Write")
    yield "<!-- tunaflow:subtask-done:1 -->\n\n"
    yield "Subtask 2: saying what wrote the note and that it can be deleted.\n\n"
    yield from _write(root, note(root), "Edit")
    yield "<!-- tunaflow:subtask-done:2 -->\n\nBoth subtasks are done; no other file changed.\n\n"
    yield "<!-- tunaflow:impl-complete -->\n"


def inspect(root: Path) -> tuple[list[int], list[str], list[str]]:
    """Check the note in ``root``: failed subtasks, findings and recommendations."""
    path = root / NOTE_PATH
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    if not text:
        return [1, 2], [f"{NOTE_PATH} is missing"], [f"Create {NOTE_PATH} as the plan says"]
    failed: list[int] = []
    findings: list[str] = []
    recommendations: list[str] = []
    missing = [name for name in top_level(root) if f"`{name}`" not in text]
    if LAYOUT_HEADING not in text or (missing and len(top_level(root)) <= MAX_ENTRIES):
        failed.append(1)
        findings.append(f"{NOTE_PATH} does not list every top-level entry"
                        + (f" (missing: {', '.join(missing[:5])})" if missing else ""))
        recommendations.append("List every top-level file and folder")
    if ABOUT_HEADING not in text:
        failed.append(2)
        findings.append(f"{NOTE_PATH} has no “About this note” section")
        recommendations.append("Say what wrote the note and that it can be deleted")
    return failed, findings, recommendations


READS: tuple[str, ...] = (NOTE_PATH,)
"""What the demo reviewer reads on a project that is not the sample."""
