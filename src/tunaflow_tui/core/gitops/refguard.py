"""Ref guard: after an agent turn, the repository's refs, HEADs, hooks and config are as tunaflow left them.

An agent with a shell can do anything git can: detach its worktree's HEAD, switch to its own or the
user's branch, move or delete branches and tags, stash, push, plant hooks. :func:`take_snapshot`
records everything that matters before a turn; :func:`check_turn` compares afterwards and repairs:

- the plan's branch made a symbolic ref (an alias of, say, ``main``) is made a branch again at the
  commit it had, with ``main`` left as it is; every ``update-ref`` of a ref tunaflow owns uses
  ``--no-deref``, so it never moves the branch an alias points at;
- the worktree goes back onto the plan's branch; commits made elsewhere that descend from it are
  fast-forwarded onto it, anything else is kept under ``refs/tunaflow/rescue/…`` (nothing becomes
  unreachable) and the caller is told to stop at a decision;
- any other ref the agent created, moved or deleted is put back, its new value kept as a rescue ref
  unless the plan's branch already contains it; the branch checked out in the user's own working
  tree, when its HEAD log shows the user moved it there, is the user's and left alone;
- a push (a remote-tracking ref "updated by push", or a remote on disk whose refs changed) is
  reported — a remote is never rewritten, so when pushing is not allowed it needs a decision;
- the shared hooks and configuration are restored (:mod:`tunaflow_tui.core.gitops.shared`).

Every git command the guard runs has hooks disabled (even ``update-ref`` runs the
``reference-transaction`` hook).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tunaflow_tui.core.counting import counted
from tunaflow_tui.core.gitops.hooks import NO_HOOKS
from tunaflow_tui.core.gitops.repo import is_ancestor
from tunaflow_tui.core.gitops.runner import GitError, identity_args
from tunaflow_tui.core.gitops.runner import run_git as _run_git
from tunaflow_tui.core.gitops.shared import SharedState, changed_shared, read_shared, restore_shared
from tunaflow_tui.core.gitops.symrefs import held, lost_tips, symref_target

OWN_PREFIX = "refs/tunaflow/"
RESCUE_PREFIX = "refs/tunaflow/rescue/"
STASH = "refs/stash"
# refs private to one working tree, or tunaflow's own: never an agent's footprint on the user's refs
_SKIPPED_PREFIXES = (OWN_PREFIX, "refs/bisect/", "refs/worktree/", "refs/rewritten/")
REMOTE_TIMEOUT_S = 15.0


def run_git(args: Sequence[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` with hooks disabled."""
    return _run_git([*NO_HOOKS, *args], cwd, **kwargs)


def git_text(args: Sequence[str], cwd: Path) -> str:
    """``git ARGS`` (hooks disabled), stdout as text without the trailing newline (a path that is not UTF-8
    keeps its bytes: ``Path`` gives them back)."""
    return run_git(args, cwd).stdout.decode("utf-8", "surrogateescape").rstrip("\n")


@dataclass(frozen=True)
class Head:
    """Where a working tree's HEAD is: a branch ref (None when detached) and a commit (None if unborn)."""

    ref: str | None
    sha: str | None

    def describe(self) -> str:
        """``main`` or ``a detached HEAD at 1a2b3c4d``."""
        if self.ref is not None:
            return short_ref(self.ref)
        return f"a detached HEAD at {(self.sha or '?')[:10]}"


@dataclass(frozen=True)
class RefSnapshot:
    """The repository before an agent turn: refs, both HEADs, stash entries, remotes on disk, shared files."""

    repo: Path
    worktree: Path | None
    refs: Mapping[str, str]
    main_head: Head
    worktree_head: Head | None
    main_reflog_size: int | None
    stash: tuple[tuple[str, str], ...]  # (sha, message), newest first
    remotes: Mapping[str, Mapping[str, str] | None]  # remote name -> its refs (remotes on disk only)
    shared: SharedState


@dataclass(frozen=True)
class Finding:
    """One thing an agent changed, what tunaflow did about it, and whether the user must decide."""

    kind: str  # worktree_head | plan_branch | ref | stash | push | shared_git | main_head | main_tree
    text: str
    repaired: bool
    needs_decision: bool = False
    ref: str | None = None
    before: str | None = None
    after: str | None = None
    rescue_ref: str | None = None

    def to_json(self) -> dict[str, object]:
        """A JSON-ready form for a plan event."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class TurnReport:
    """Everything :func:`check_turn` found, in the order it was handled."""

    findings: tuple[Finding, ...] = ()
    shared_paths: tuple[str, ...] = field(default=())  # shared files restored, as the user knows them

    @property
    def needs_decision(self) -> bool:
        """True when something could not be put right and the plan must stop at a decision."""
        return any(f.needs_decision for f in self.findings)

    @property
    def reason(self) -> str:
        """The sentences that explain the decision (empty when none is needed)."""
        return " ".join(f.text for f in self.findings if f.needs_decision)

    @property
    def changed(self) -> bool:
        """True when anything at all was found."""
        return bool(self.findings)


def short_ref(ref: str) -> str:
    """``main`` for ``refs/heads/main``, ``origin/main`` for ``refs/remotes/origin/main``, else the ref."""
    for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return ref


# ----------------------------------------------------------------------------------- reading
def _refs(repo: Path) -> dict[str, str]:
    out = run_git(["for-each-ref", "--format=%(refname)%00%(objectname)"], repo).stdout
    refs: dict[str, str] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        name, _, sha = line.partition("\0")
        if name and sha:
            refs[name] = sha
    return refs


def read_head(tree: Path) -> Head:
    """The HEAD of the working tree at ``tree``."""
    proc = run_git(["symbolic-ref", "-q", "HEAD"], tree, check=False)
    ref = proc.stdout.decode("utf-8", "surrogateescape").strip() if proc.returncode == 0 else None
    sha_proc = run_git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], tree, check=False)
    sha = sha_proc.stdout.decode("ascii", "replace").strip() if sha_proc.returncode == 0 else None
    return Head(ref or None, sha or None)


def _reflog_path(tree: Path) -> Path:
    raw = Path(git_text(["rev-parse", "--git-path", "logs/HEAD"], tree))
    return raw if raw.is_absolute() else tree / raw


def _reflog_size(tree: Path) -> int | None:
    try:
        return _reflog_path(tree).stat().st_size
    except OSError:
        return None


def _stash(repo: Path) -> tuple[tuple[str, str], ...]:
    proc = run_git(["stash", "list", "--format=%H%x00%gs"], repo, check=False)
    entries = []
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        sha, _, message = line.partition("\0")
        if sha:
            entries.append((sha, message))
    return tuple(entries)


def _is_local_url(url: str) -> bool:
    if url.startswith("file://"):
        return True
    if "://" in url:
        return False
    # scp-like ``host:path`` has a colon before any slash
    head = url.split("/", 1)[0]
    return ":" not in head


def _remote_urls(repo: Path) -> dict[str, str]:
    proc = run_git(["config", "--get-regexp", r"^remote\..*\.(url|pushurl)$"], repo, check=False)
    urls: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        key, _, url = line.partition(" ")
        name = key[len("remote."):].rsplit(".", 1)[0]
        if url and _is_local_url(url):
            urls[name] = url  # a pushurl (listed after url) wins: that is where a push goes
    return urls


def _remote_refs(repo: Path, url: str) -> dict[str, str] | None:
    try:
        proc = run_git(["ls-remote", "--", url], repo, check=False, timeout_s=REMOTE_TIMEOUT_S)
    except GitError:
        return None
    if proc.returncode != 0:
        return None
    refs: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        sha, _, name = line.partition("\t")
        if name:
            refs[name] = sha
    return refs


def take_snapshot(repo: Path, worktree: Path | None = None) -> RefSnapshot:
    """Record the repository at ``repo`` (its main working tree) and the plan's ``worktree``."""
    repo = Path(repo).resolve()
    wt = Path(worktree).resolve() if worktree is not None else None
    urls = _remote_urls(repo)
    return RefSnapshot(
        repo=repo,
        worktree=wt,
        refs=_refs(repo),
        main_head=read_head(repo),
        worktree_head=read_head(wt) if wt is not None else None,
        main_reflog_size=_reflog_size(repo),
        stash=_stash(repo),
        remotes={name: _remote_refs(repo, url) for name, url in urls.items()},
        shared=read_shared(repo, wt),
    )


# ----------------------------------------------------------------------------------- repairing
class _Rescuer:
    """Names and writes ``refs/tunaflow/rescue/<plan>/<time>-<n>-<what>`` refs."""

    def __init__(self, repo: Path, label: str) -> None:
        self.repo = repo
        self.label = _ref_part(label) or "project"
        self.stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.count = 0
        self.kept: dict[str, str] = {}

    def keep(self, sha: str, what: str) -> str:
        """A rescue ref holding ``sha`` (one per commit: kept twice, it is named once)."""
        if sha in self.kept:
            return self.kept[sha]
        self.count += 1
        name = f"{RESCUE_PREFIX}{self.label}/{self.stamp}-{self.count}-{_ref_part(what) or 'ref'}"
        run_git(["update-ref", "--no-deref", "-m", "tunaflow: kept after an agent turn", name, sha], self.repo)
        self.kept[sha] = name
        return name


def keep_as_rescue(repo: Path, label: str, sha: str, what: str) -> str:
    """Keep ``sha`` under a new ``refs/tunaflow/rescue/<label>/…-<what>`` ref; the ref's name."""
    return _Rescuer(repo, label).keep(sha, what)


def _ref_part(text: str) -> str:
    """``text`` as one safe ref name component (letters, digits, ``._-``; no ``..`` or ``.lock``)."""
    part = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]+", "-", text))[:60]
    return part.strip("-.").removesuffix(".lock")


def _capture_worktree(worktree: Path, head: str | None) -> str | None:
    """A commit holding the worktree exactly as it is (untracked files too), on top of ``head``."""
    with tempfile.TemporaryDirectory(prefix="tunaflow-rescue-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if head:
            run_git(["read-tree", head], worktree, env=env)
        run_git(["add", "-A"], worktree, env=env)
        tree = run_git(["write-tree"], worktree, env=env).stdout.decode("ascii").strip()
    if head and tree == git_text(["rev-parse", f"{head}^{{tree}}"], worktree):
        return head
    parents = ["-p", head] if head else []
    proc = run_git([*identity_args(worktree), "commit-tree", tree, *parents, "-m",
                    "tunaflow: the worktree as an agent left it"], worktree)
    return proc.stdout.decode("ascii").strip()


def _main_moves(snap: RefSnapshot) -> set[str] | None:
    """Commits the user's working tree's HEAD moved to during the turn (None: it keeps no log)."""
    if snap.main_reflog_size is None:
        return None
    try:
        with _reflog_path(snap.repo).open("rb") as fh:
            fh.seek(snap.main_reflog_size)
            tail = fh.read()
    except OSError:
        return None
    moved: set[str] = set()
    for line in tail.decode("utf-8", "replace").splitlines():
        parts = line.split(" ", 2)
        if len(parts) >= 2:
            moved.add(parts[1])
    return moved


class _Check:
    """One comparison of a snapshot with the repository as it is now, and the repairs it makes."""

    def __init__(self, snap: RefSnapshot, plan_ref: str | None, actor: str, *, allow_push: bool,
                 repair_refs: bool, ignore_refs: Collection[str], rescue_label: str,
                 watch_refs: Collection[str] = ()) -> None:
        self.snap = snap
        self.repo = snap.repo
        self.plan_ref = plan_ref
        self.actor = actor
        self.who = actor[:1].upper() + actor[1:]
        self.allow_push = allow_push
        self.repair_refs = repair_refs
        self.ignore = set(ignore_refs)
        self.watch = set(watch_refs)
        self.rescuer = _Rescuer(snap.repo, rescue_label)
        self.findings: list[Finding] = []
        self.pushes: set[tuple[str, str]] = set()

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def plan_tip(self) -> str | None:
        if self.plan_ref is None:
            return None
        proc = run_git(["rev-parse", "-q", "--verify", f"{self.plan_ref}^{{commit}}"], self.repo, check=False)
        return proc.stdout.decode("ascii").strip() or None if proc.returncode == 0 else None

    def contained(self, sha: str) -> bool:
        tip = self.plan_tip()
        return tip is not None and is_ancestor(self.repo, sha, tip)

    def keep(self, sha: str | None, what: str) -> str | None:
        """A rescue ref for ``sha`` unless the plan's branch already holds it."""
        if sha is None or self.contained(sha):
            return None
        return self.rescuer.keep(sha, what)

    # ------------------------------------------------------------------ the plan's worktree
    def worktree_head(self) -> None:
        snap, wt = self.snap, self.snap.worktree
        if wt is None or self.plan_ref is None:
            return
        now = read_head(wt)
        if now.ref == self.plan_ref:
            return
        plan_short = short_ref(self.plan_ref)
        tip = self.plan_tip() or snap.refs.get(self.plan_ref)
        where = now.describe()
        if now.sha is not None and tip is not None and is_ancestor(self.repo, tip, now.sha):
            moved = int(git_text(["rev-list", "--count", f"{tip}..{now.sha}"], self.repo) or "0")
            run_git(["update-ref", "--no-deref", "-m", "tunaflow: the agent's commits back on the plan's branch",
                     self.plan_ref, now.sha], self.repo)
            run_git(["symbolic-ref", "-m", "tunaflow: back on the plan's branch", "HEAD", self.plan_ref], wt)
            carried = f"; its {counted(moved, 'commit')} {'was' if moved == 1 else 'were'} moved onto {plan_short}" if moved else ""
            self.add(Finding("worktree_head", f"{self.who} left {plan_short} for {where}: its worktree is back "
                             f"on {plan_short}{carried}.", repaired=True, ref=now.ref, before=tip, after=now.sha))
            return
        kept = _capture_worktree(wt, now.sha)
        rescue = self.rescuer.keep(kept, "worktree") if kept else None
        run_git(["checkout", "-f", "-q", plan_short, "--"], wt)
        run_git(["clean", "-f", "-d", "-q"], wt)
        saved = f" Its work there is kept at {rescue}." if rescue else ""
        self.add(Finding(
            "worktree_head",
            f"{self.who} switched its worktree from {plan_short} to {where}, which does not build on the "
            f"plan's branch; tunaflow put the worktree back on {plan_short}.{saved}",
            repaired=False, needs_decision=True, ref=now.ref, before=tip, after=now.sha, rescue_ref=rescue,
        ))

    def plan_alias(self) -> None:
        """The plan's branch made a symbolic ref: a commit on it would move the branch it points at."""
        if self.plan_ref is None:
            return
        target = symref_target(self.repo, self.plan_ref)
        if target is None:
            return
        before = self.snap.refs.get(self.plan_ref)
        short, aliased = short_ref(self.plan_ref), short_ref(target)
        if before is None:
            run_git(["update-ref", "--no-deref", "-d", self.plan_ref], self.repo)
            done = "tunaflow removed the alias"
        else:
            run_git(["update-ref", "--no-deref", "-m", "tunaflow: the plan's branch is no alias", self.plan_ref,
                     before], self.repo)
            done = f"tunaflow made it a branch again at {before[:10]}"
        # commits the branch got during the turn, before it became an alias, are named only by its log now
        kept = lost_tips(self.repo, self.plan_ref, lambda sha: self.rescuer.keep(sha, f"{short}-before"))
        saved = f"; the commits it held are kept at {', '.join(kept)}" if kept else ""
        self.add(Finding("plan_branch", f"{self.who} made {short} an alias of {aliased}, so commits on the plan's "
                         f"branch would have moved {aliased}: {done}, leaving {aliased} as it is{saved}.",
                         repaired=True, ref=self.plan_ref, before=before, after=target))

    def plan_branch(self) -> None:
        if self.plan_ref is None or self.plan_ref not in self.snap.refs:
            return
        before = self.snap.refs[self.plan_ref]
        now = self.plan_tip()
        short = short_ref(self.plan_ref)
        if now is None:
            try:
                run_git(["update-ref", "--no-deref", "-m", "tunaflow: plan branch restored", self.plan_ref, before],
                        self.repo)
            except GitError as exc:  # e.g. the agent made <plan>/sub: the branch's name is a folder of refs now
                self.lost_branch(before, exc)
                return
            self.add(Finding("plan_branch", f"{self.who} deleted {short}; tunaflow restored it.",
                             repaired=True, ref=self.plan_ref, before=before))
        elif not is_ancestor(self.repo, before, now):
            rescue = self.rescuer.keep(before, f"{short}-before")
            self.add(Finding("plan_branch", f"{self.who} rewrote the history of {short}; the commits it "
                             f"dropped are kept at {rescue}.", repaired=True, ref=self.plan_ref, before=before,
                             after=now, rescue_ref=rescue))

    def lost_branch(self, before: str, exc: GitError) -> None:
        """The plan's branch is gone and cannot be made again: its commits kept under a rescue ref, a decision."""
        assert self.plan_ref is not None
        short = short_ref(self.plan_ref)
        wt = self.snap.worktree
        # the branch's own log went with it: the worktree's HEAD log names what the agent committed on it
        kept = lost_tips(wt, "HEAD", lambda sha: self.rescuer.keep(sha, f"{short}-before")) if wt is not None else []
        if not kept or not held(self.repo, before):  # a ref the user can make the branch again from, always
            kept.append(self.rescuer.keep(before, f"{short}-before"))
        in_way = sorted(short_ref(r) for r in _refs(self.repo) if r.startswith(f"{self.plan_ref}/"))
        if in_way:
            why = f"{', '.join(in_way)} {'is' if len(in_way) == 1 else 'are'} in its way"
        else:  # git's own reason: the first line of what it said (a failure to start says nothing)
            why = (exc.stderr.splitlines() or [str(exc)])[0]
        self.add(Finding("plan_branch", f"{self.who} deleted {short} and tunaflow could not make it again ({why}); "
                         f"its commits are kept at {', '.join(kept)}.", repaired=False, needs_decision=True,
                         ref=self.plan_ref, before=before, rescue_ref=kept[0]))

    # ------------------------------------------------------------------ every other ref
    def other_refs(self, now: Mapping[str, str]) -> None:
        snap = self.snap
        user_moves = _main_moves(snap)
        main_now = read_head(snap.repo)
        user_branches = {h for h in (snap.main_head.ref, main_now.ref) if h}
        for ref in sorted(set(snap.refs) | set(now)):
            before, after = snap.refs.get(ref), now.get(ref)
            if before == after or ref == self.plan_ref or ref in self.ignore or ref == STASH:
                continue
            if ref.startswith(_SKIPPED_PREFIXES):
                continue
            if ref.startswith("refs/remotes/"):
                self.remote_tracking(ref, before, after)
                continue
            name = short_ref(ref)
            if ref in self.watch:  # another plan's branch, while nothing of tunaflow's worked on that plan
                was = f"at {before[:10]}" if before else "not there"
                self.add(Finding("ref", f"{name}, another plan's branch, changed during {self.actor}'s turn while "
                                 f"that plan was not at work; tunaflow left it as it is (it was {was}): look at "
                                 "it before you merge that plan.", repaired=False, ref=ref, before=before,
                                 after=after))
                continue
            if ref in user_branches and (user_moves is None or (after is not None and after in user_moves)):
                self.add(Finding("ref", f"{name} moved in your own working tree during {self.actor}'s turn; "
                                 "tunaflow left it alone.", repaired=False, ref=ref, before=before, after=after))
                continue
            if not self.repair_refs:
                self.add(Finding("ref", f"{name} changed during {self.actor}'s turn.", repaired=False,
                                 ref=ref, before=before, after=after))
                continue
            rescue = self.keep(after, name)
            if before is None:
                run_git(["update-ref", "--no-deref", "-d", ref, after or ""], self.repo)
                done = f"{self.who} created {name}; tunaflow removed it"
            else:
                run_git(["update-ref", "--no-deref", "-m", "tunaflow: restored after an agent turn", ref, before,
                         *([after] if after else [])], self.repo)
                verb = "deleted" if after is None else "moved"
                done = f"{self.who} {verb} {name}; tunaflow put it back at {before[:10]}"
            kept = f" (its commits are kept at {rescue})" if rescue else ""
            self.add(Finding("ref", f"{done}{kept}.", repaired=True, ref=ref, before=before, after=after,
                             rescue_ref=rescue))

    def stash(self) -> None:
        before = self.snap.stash
        now = _stash(self.repo)
        # an alias lists its target's log as stash entries (none for a ref without a log): nothing of the
        # stash's to keep, and a later `git stash` would move the target
        alias = symref_target(self.repo, STASH)
        if now == before and alias is None:
            return
        if not self.repair_refs:
            self.add(Finding("stash", f"The stash changed during {self.actor}'s turn.", repaired=False, ref=STASH))
            return
        old = {sha for sha, _ in before}
        rescued = [self.rescuer.keep(sha, "stash") for sha, _ in now if sha not in old] if alias is None else []
        run_git(["update-ref", "--no-deref", "-d", STASH], self.repo)  # a lock held: told, not claimed
        for sha, message in reversed(before):
            run_git(["stash", "store", "-q", "-m", message, sha], self.repo)
        if alias is not None:
            aliased = short_ref(alias)
            self.add(Finding("stash", f"{self.who} made the stash an alias of {aliased}; tunaflow removed the alias "
                             f"and put the stash back, leaving {aliased} itself as it is.", repaired=True, ref=STASH,
                             after=alias))
            return
        kept = f" (its entries are kept at {', '.join(rescued)})" if rescued else ""
        self.add(Finding("stash", f"{self.who} changed the stash; tunaflow put it back{kept}.", repaired=True,
                         ref=STASH))

    def remote_tracking(self, ref: str, before: str | None, after: str | None) -> None:
        """A remote-tracking ref moved: a fetch is nobody's business, a push is reported."""
        how = ""
        if after is not None:
            proc = run_git(["log", "-g", "-1", "--format=%gs", ref, "--"], self.repo, check=False)
            how = proc.stdout.decode("utf-8", "replace").strip()
        if how.startswith("update by push"):
            remote, _, branch = ref[len("refs/remotes/"):].partition("/")
            self.push(remote, branch, before, after, ref=ref)

    def remotes(self) -> None:
        """Remotes on disk: compare their refs, which catches a push that updated no tracking ref."""
        urls = _remote_urls(self.repo)
        for name, refs_before in self.snap.remotes.items():
            url = urls.get(name)
            if refs_before is None or url is None:
                continue
            refs_after = _remote_refs(self.repo, url)
            if refs_after is None:  # unreadable now: nothing to compare (a push does not delete a remote)
                continue
            for ref in sorted(set(refs_before) | set(refs_after)):
                if ref != "HEAD" and refs_before.get(ref) != refs_after.get(ref):
                    self.push(name, short_ref(ref), refs_before.get(ref), refs_after.get(ref), ref=ref)

    def push(self, remote: str, branch: str, before: str | None, after: str | None, *, ref: str) -> None:
        """Report a push to ``remote``; without ``allow_push`` it needs the user's decision."""
        if (remote, branch) in self.pushes:
            return
        self.pushes.add((remote, branch))
        if after is None:
            change = f"deleted {branch}"
        elif before is None:
            change = f"created {branch} at {after[:10]}"
        else:
            change = f"moved {branch} from {before[:10]} to {after[:10]}"
        if self.allow_push:
            text = f"{self.who} pushed to {remote} ({change}); [workflow] allow_push permits it."
            self.add(Finding("push", text, repaired=False, ref=ref, before=before, after=after))
            return
        text = (f"{self.who} pushed to {remote} ({change}) although pushing is off "
                "([workflow] allow_push = false). tunaflow never rewrites a remote: check it yourself.")
        self.add(Finding("push", text, repaired=False, needs_decision=True, ref=ref, before=before, after=after))

    # ------------------------------------------------------------------ hooks and configuration
    def shared(self) -> list[str]:
        state = self.snap.shared
        if not changed_shared(state):
            return []
        restored, failed = restore_shared(state)
        shown = [state.display(p) for p in restored]
        if restored:
            self.add(Finding("shared_git", f"{self.who} changed shared git files "
                             f"({', '.join(shown[:5])}); tunaflow restored them.", repaired=True))
        if failed:
            self.add(Finding("shared_git", f"{self.who} changed {', '.join(state.display(p) for p in failed[:5])} "
                             "and tunaflow could not restore it: check it before you commit.",
                             repaired=False, needs_decision=True))
        return shown

    def main_head(self) -> None:
        now = read_head(self.snap.repo)
        if self.snap.main_head.ref != now.ref:
            self.add(Finding("main_head", f"Your own working tree switched from {self.snap.main_head.describe()} to "
                             f"{now.describe()} during {self.actor}'s turn; tunaflow left it alone.",
                             repaired=False, ref=now.ref, before=self.snap.main_head.sha, after=now.sha))


def check_turn(
    snap: RefSnapshot,
    *,
    plan_ref: str | None,
    actor: str = "the agent",
    allow_push: bool = False,
    repair_refs: bool = True,
    ignore_refs: Collection[str] = (),
    watch_refs: Collection[str] = (),
    rescue_label: str = "project",
    restore_worktree: Callable[[], object] | None = None,
) -> TurnReport:
    """Compare the repository with ``snap`` (taken before an agent turn) and repair what the agent did.

    ``plan_ref`` is the plan's branch (``refs/heads/tunaflow/<slug>``), the only ref the agent may
    advance; ``ignore_refs`` are refs other work of tunaflow may move meanwhile (other plans'
    branches, while tunaflow works on those plans); ``watch_refs`` are refs a change of which is reported
    and left alone (other plans' branches while nothing works on them). With ``repair_refs`` off (no worktree: the agent works in the user's tree) other
    refs are only reported. ``actor`` names the agent in the sentences ("the Developer", "a reviewer").
    ``restore_worktree`` (for reviewers, who may change nothing) runs once the hooks are safe again
    and before HEAD and the refs are looked at.
    """
    check = _Check(snap, plan_ref, actor, allow_push=allow_push, repair_refs=repair_refs,
                   ignore_refs=ignore_refs, rescue_label=rescue_label, watch_refs=watch_refs)
    shared: list[str] = []
    # hooks and configuration first: every later step runs git
    steps: list[tuple[str, Callable[[], object]]] = [
        ("the shared hooks and configuration", lambda: shared.extend(check.shared())),
        # before anything moves the plan's branch: an alias would carry the move to the branch it points at
        ("what the plan's branch points at", check.plan_alias),
        *([("the worktree's files", restore_worktree)] if restore_worktree is not None else []),
        ("the worktree's HEAD", check.worktree_head),
        ("the plan's branch", check.plan_branch),
        ("the other refs", lambda: check.other_refs(_refs(snap.repo))),
        ("the stash", check.stash),
        ("the remotes", check.remotes),
        ("your working tree's HEAD", check.main_head),
    ]
    for what, step in steps:
        try:
            step()
        except (GitError, OSError) as exc:
            check.add(Finding("error", f"tunaflow could not check or repair {what} after {actor}'s turn: {exc}",
                              repaired=False, needs_decision=True))
    return TurnReport(tuple(check.findings), tuple(shared))
