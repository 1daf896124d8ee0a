"""Running the ``git`` executable: argv lists only, no prompts, timeouts, errors with git's stderr.

Every git command tunaflow runs goes through :func:`run_git`, which runs nothing an agent could
have planted in the repository's configuration (agents run as the user, in worktrees that share
``.git/config`` and ``.git/hooks``):

- a pinned configuration on the command line, which beats every configuration file: no fsmonitor,
  no hooks (callers that commit or merge name the hooks trusted at approval, see
  :mod:`tunaflow_tui.core.gitops.hooks`), no external diff, pager, askpass, credential helper or
  ``ext::`` transport;
- programs named by the repository's own configuration (filters, merge and diff drivers, signing
  programs, upload-pack) reset to what the user's global and system configuration say, or blanked:
  an unknown filter marked ``required`` then fails the command rather than running;
- ``--no-ext-diff --no-textconv`` on ``diff``, ``log`` and ``show``;
- an environment without inherited ``GIT_*`` variables (``GIT_DIR``, ``GIT_CONFIG_PARAMETERS``,
  ``GIT_SSH_COMMAND`` …) except the identity and the choice of global/system configuration files,
  with no prompt, editor or pager, and ``GIT_OPTIONAL_LOCKS=0`` for ``status``.

The user's identity (``user.*``) and signing settings are kept; signing runs the global program.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

DEFAULT_TIMEOUT_S = 60.0

# Identity used only when the user has configured none, so a commit never fails on a fresh machine.
FALLBACK_NAME = "tunaflow"
FALLBACK_EMAIL = "tunaflow@localhost"


class GitError(RuntimeError):
    """A git command failed, timed out or could not be started; the message carries git's stderr."""

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


PINNED_CONFIG: tuple[str, ...] = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",  # a caller's own core.hooksPath, given later, wins
    "-c", "diff.external=",
    "-c", "core.pager=cat",
    "-c", "core.askPass=",
    "-c", "credential.helper=",  # empty resets the list
    "-c", "core.sshCommand=",
    "-c", "core.gitProxy=",
    "-c", "protocol.ext.allow=never",
)
"""Configuration every tunaflow git command runs with (command-line configuration beats the files)."""

#: git's own environment variables kept from tunaflow's environment: the identity, and which
#: global and system configuration files to read (the user's choice, made before tunaflow started)
KEPT_GIT_VARIABLES = frozenset({
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
})

#: configuration keys naming a program git runs, and what they fall back to when only the
#: repository's own configuration sets them ("" blanks the entry)
_PROGRAM_KEYS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"filter\..+\.(clean|smudge|process)", re.IGNORECASE), ""),
    (re.compile(r"merge\..+\.driver", re.IGNORECASE), ""),
    (re.compile(r"diff\..+\.(textconv|command)", re.IGNORECASE), ""),
    (re.compile(r"gpg\.program", re.IGNORECASE), "gpg"),
    (re.compile(r"gpg\.openpgp\.program", re.IGNORECASE), "gpg"),
    (re.compile(r"gpg\.x509\.program", re.IGNORECASE), "gpgsm"),
    (re.compile(r"gpg\.ssh\.program", re.IGNORECASE), "ssh-keygen"),
    (re.compile(r"gpg\.ssh\.defaultKeyCommand", re.IGNORECASE), ""),
    (re.compile(r"remote\..+\.uploadpack", re.IGNORECASE), "git-upload-pack"),
    (re.compile(r"remote\..+\.receivepack", re.IGNORECASE), "git-receive-pack"),
)
_PROGRAM_KEYS_QUERY = (r"^(filter\..+\.(clean|smudge|process)|merge\..+\.driver|diff\..+\.(textconv|command)"
                       r"|gpg(\..+)?\.program|gpg\.ssh\.defaultkeycommand|remote\..+\.(uploadpack|receivepack))$")
_TRUSTED_SCOPES = frozenset({"system", "global"})
#: what ``git lfs install --local`` writes: Git LFS's own programs, kept (blanking them would commit
#: the files' contents instead of LFS pointers, or fail every command on ``required``)
_LFS_VALUES = frozenset({
    ("filter.lfs.clean", "git-lfs clean -- %f"),
    ("filter.lfs.smudge", "git-lfs smudge -- %f"),
    ("filter.lfs.process", "git-lfs filter-process"),
})

#: subcommands that never run a filter, driver or signing program (no configuration query needed)
_PLUMBING = frozenset({
    "rev-parse", "config", "for-each-ref", "update-ref", "symbolic-ref", "show-ref", "reflog", "rev-list",
    "merge-base", "init", "ls-tree", "ls-files", "check-ref-format", "check-ignore", "check-attr", "var",
    "mktree", "count-objects", "name-rev", "branch",
})
#: subcommands that only read configuration and paths, and run nothing: pinning would make them
#: report the pinned values (``rev-parse --git-path hooks`` → ``/dev/null``) instead of the user's
_READS_CONFIG = frozenset({"config", "rev-parse"})
#: diff-like subcommands that get ``--no-ext-diff --no-textconv``
_DIFF_LIKE = frozenset({"diff", "log", "show"})


def _subcommand_at(args: Sequence[str]) -> int | None:
    """The index of the subcommand in ``args`` (after ``-c k=v``, ``-C dir`` and other global options)."""
    i = 0
    while i < len(args):
        token = args[i]
        if token in ("-c", "-C"):
            i += 2
        elif token.startswith("-"):
            i += 1
        else:
            return i
    return None


def _needs_program_pins(sub: str, rest: Sequence[str]) -> bool:
    if sub == "cat-file":
        return any(a.startswith(("--filters", "--textconv")) for a in rest)
    if sub == "hash-object":
        return "--no-filters" not in rest
    if sub == "worktree":
        return not rest or rest[0] not in ("list", "prune")  # remove checks the files: filters run
    return sub not in _PLUMBING


def program_pins(cwd: Path) -> list[str]:
    """``-c`` pairs resetting programs that only the repository's own configuration names.

    Reads the configuration with ``git config`` (which runs nothing). A key set in the repository's
    ``local`` or ``worktree`` scope (includes too) is put back to the last system or global value,
    or to git's default, or blanked.
    """
    try:
        proc = subprocess.run(
            ["git", *PINNED_CONFIG, "config", "--show-scope", "-z", "--get-regexp", _PROGRAM_KEYS_QUERY],
            cwd=cwd, capture_output=True, timeout=DEFAULT_TIMEOUT_S, env=git_env(), check=False,
            stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return []
    parts = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    trusted: dict[str, str] = {}
    planted: dict[str, str] = {}  # lower-cased key -> key as written
    for scope, entry in zip(parts[0::2], parts[1::2], strict=False):
        key, _sep, value = entry.partition("\n")
        if scope in _TRUSTED_SCOPES or (key.lower(), value) in _LFS_VALUES:
            trusted[key.lower()] = value
            planted.pop(key.lower(), None)
        else:
            planted[key.lower()] = key
    pins: list[str] = []
    for lowered, key in sorted(planted.items()):
        fallback = next((default for pattern, default in _PROGRAM_KEYS if pattern.fullmatch(key)), "")
        pins += ["-c", f"{key}={trusted.get(lowered, fallback)}"]
    return pins


def pinned_args(args: Sequence[str], cwd: Path) -> list[str]:
    """``args`` for git with the pinned configuration in front (see the module docstring)."""
    at = _subcommand_at(args)
    if at is not None and args[at] in _READS_CONFIG:
        return ["--no-pager", *args]
    out = ["--no-pager", *PINNED_CONFIG]
    if at is None:
        return [*out, *args]
    sub = args[at]
    rest = args[at + 1:]
    if _needs_program_pins(sub, rest):
        out += program_pins(cwd)
    if sub in _DIFF_LIKE:
        return [*out, *args[: at + 1], "--no-ext-diff", "--no-textconv", *rest]
    return [*out, *args]


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for git subprocesses: the user's without git's own variables, no prompts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT_GIT_VARIABLES}
    env["GIT_TERMINAL_PROMPT"] = "0"
    # Never open an editor or pager: there is no terminal to show them in.
    env["GIT_EDITOR"] = "true"
    env["GIT_PAGER"] = "cat"
    if extra:
        env.update(extra)
    return env


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    check: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    input_bytes: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd`` (pinned: see the module docstring) and return the completed process.

    Raises ``GitError`` when git is missing, times out, or (with ``check``) exits non-zero.
    """
    argv = ["git", *pinned_args(args, Path(cwd))]
    at = _subcommand_at(args)
    if at is not None and args[at] == "status":
        # a status tunaflow takes must not hold index.lock against the user's or an agent's git
        env = {"GIT_OPTIONAL_LOCKS": "0", **(env or {})}
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            input=input_bytes,
            stdin=None if input_bytes is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            env=git_env(env),
            check=False,
        )
    except FileNotFoundError as exc:
        if not Path(cwd).is_dir():
            raise GitError(f"not a directory: {cwd}") from exc
        raise GitError("git is not installed (no 'git' on PATH)") from exc
    except NotADirectoryError as exc:
        raise GitError(f"not a directory: {cwd}") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {' '.join(args[:2])} timed out after {timeout_s:g}s") from exc
    if check and proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        detail = stderr or proc.stdout.decode("utf-8", "replace").strip()
        raise GitError(
            f"git {' '.join(args[:2])} failed (exit {proc.returncode}): {detail}",
            returncode=proc.returncode,
            stderr=stderr,
        )
    return proc


def git_text(args: Sequence[str], cwd: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    """Run git and return its stdout as text with the trailing newline removed."""
    proc = run_git(args, cwd, timeout_s=timeout_s)
    return proc.stdout.decode("utf-8", "replace").rstrip("\n")


def identity_args(cwd: Path) -> list[str]:
    """``-c user.name=… -c user.email=…`` for whichever identity part the user has not configured."""
    args: list[str] = []
    for key, fallback, env_names in (
        ("user.name", FALLBACK_NAME, ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")),
        ("user.email", FALLBACK_EMAIL, ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")),
    ):
        if all(os.environ.get(name) for name in env_names):
            continue
        proc = run_git(["config", "--get", key], cwd, check=False)
        if not proc.stdout.strip():
            args += ["-c", f"{key}={fallback}"]
    return args
