"""Running the ``git`` executable: argv lists only, no prompts, timeouts, errors with git's stderr."""

from __future__ import annotations

import os
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


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for git subprocesses: the user's, with terminal prompts disabled."""
    env = dict(os.environ)
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
    """Run ``git ARGS`` in ``cwd`` and return the completed process (bytes output).

    Raises ``GitError`` when git is missing, times out, or (with ``check``) exits non-zero.
    """
    argv = ["git", *args]
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
