"""Branches and session links as plain JSON-ready data, shared by `tunaflow branch` and `tunaflow status`.

Labels, summaries and notes come from agents and users: every string is neutralised here, so a
script that prints a field never hands control sequences to its terminal.
"""

from __future__ import annotations

from typing import Any

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.records import BranchRecord, SessionLinkRecord
from tunaflow_tui.core.terminal_text import neutralize


def inert(value: Any) -> Any:
    """``value`` with every string in it (keys included) neutralised; lists and tuples become lists."""
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, dict):
        return {inert(key): inert(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [inert(item) for item in value]
    return value


def tree_order(branches: tuple[BranchRecord, ...]) -> list[tuple[BranchRecord, int]]:
    """Branches parent before children (oldest first among siblings), each with its depth."""
    known = {branch.id for branch in branches}
    children: dict[int | None, list[BranchRecord]] = {}
    for branch in branches:
        parent = branch.parent_branch_id if branch.parent_branch_id in known else None
        children.setdefault(parent, []).append(branch)
    ordered: list[tuple[BranchRecord, int]] = []
    stack = [(branch, 0) for branch in reversed(children.get(None, []))]
    while stack:
        branch, depth = stack.pop()
        ordered.append((branch, depth))
        stack += [(child, depth + 1) for child in reversed(children.get(branch.id, []))]
    return ordered


def branch_json(branch: BranchRecord, store: Store, depth: int = 0) -> dict[str, Any]:
    """One branch: where it forks from, how it knows its parent, its session and its state."""
    item: dict[str, Any] = inert({
        "id": branch.id,
        "conversation_id": branch.shadow_conversation_id,
        "parent_conversation_id": branch.conversation_id,
        "parent_branch_id": branch.parent_branch_id,
        "checkpoint_message_id": branch.checkpoint_id,
        "depth": depth,
        "label": branch.label,
        "kind": branch.kind,
        "mode": branch.mode,
        "status": branch.status,
        "git_branch": branch.git_branch,
        "worktree_path": branch.worktree_path,
        "engine": branch.engine,
        "session_id": branch.engine_session_id,
        "context_source": branch.context_source,
        "messages": store.count_messages(branch.shadow_conversation_id),
        "created_at": branch.created_at.isoformat(),
        "updated_at": branch.updated_at.isoformat(),
    })
    return item


def link_json(link: SessionLinkRecord) -> dict[str, Any]:
    """One session link (e.g. a parent conversation citing a branch adopted into it)."""
    item: dict[str, Any] = inert({
        "id": link.id,
        "from_conversation_id": link.from_conversation_id,
        "to_conversation_id": link.to_conversation_id,
        "kind": link.kind,
        "note": link.note,
        "created_at": link.created_at.isoformat(),
    })
    return item


def branch_tree_json(store: Store) -> list[dict[str, Any]]:
    """Every branch in tree order (see :func:`tree_order`)."""
    return [branch_json(branch, store, depth) for branch, depth in tree_order(store.list_branches())]


CONTEXT_WORDS = {"native_fork": "native fork", "inheritance": "inherits"}


def branch_line(item: dict[str, Any]) -> str:
    """One branch as a line of a listing, indented by its depth."""
    label = " ".join(str(item["label"]).split()) or "(no label)"
    if len(label) > 40:
        label = label[:39] + "…"
    where = f"at #{item['checkpoint_message_id']}" if item["checkpoint_message_id"] is not None else "no checkpoint"
    kind = "roundtable" if item["mode"] == "roundtable" and item["kind"] == "general" else item["kind"]
    extras = [kind, item["status"], f"{item['messages']} msg", where,
              f"from {item['parent_conversation_id']}"]
    if item["git_branch"]:
        extras.append(f"git {item['git_branch']}")
    if item["engine"]:
        extras.append(str(item["engine"]))
    if item["context_source"]:
        extras.append(CONTEXT_WORDS.get(str(item["context_source"]), str(item["context_source"])))
    return f"{'  ' * item['depth']}#{item['id']:<3} {label}  ({', '.join(str(e) for e in extras)})"
