"""`tunaflow ARGS` run the way a script runs it, in this test process or in a new one.

A new process pays Python's start and tunaflow's imports (about half a second of CPU) for every
command; tests that run many commands one after another, none of them about the process itself
(signals, exit on a closed pipe, another process holding the project), run them here instead,
through the same entry point ``python -m tunaflow_tui`` calls. What the command sees is what a new
process would: its arguments, working directory, environment and stdin, and file descriptors 0, 1
and 2 pointing at its own stdin and output files (so the processes it starts — agents, git — write
into the same output as it does). What the test gets back is the same ``CompletedProcess``: an
uncaught exception is a traceback on stderr and exit status 1, as Python's own.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO


def tunaflow(args: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None, stdin: str | None = None,
             in_process: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``tunaflow ARGS`` in ``cwd`` (this process's if None) with ``env`` (this process's environment if
    None) and ``stdin``.

    ``in_process=False`` starts ``python -m tunaflow_tui`` as its own process (``timeout`` applies
    there only: in this process pytest's own time limit stands in for it).
    """
    argv = [sys.executable, "-m", "tunaflow_tui", *args]
    environment = {**(os.environ if env is None else env), "PYTHONIOENCODING": "utf-8"}
    if "PYTHONPATH" in os.environ:  # the code under test, not another copy installed elsewhere
        environment.setdefault("PYTHONPATH", os.environ["PYTHONPATH"])
    if not in_process:
        return subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", timeout=timeout,
                              input=stdin, env=environment, cwd=cwd)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as given:
        given.write((stdin or "").encode("utf-8"))
        given.seek(0)
        with _as_process(cwd or Path.cwd(), environment, given, out, err):
            code = _main(list(args))
        return subprocess.CompletedProcess(argv, code, _read(out), _read(err))


def _main(args: list[str]) -> int:
    """``python -m tunaflow_tui``'s ``raise SystemExit(main())`` and Python's handling of what escapes it."""
    from tunaflow_tui.cli import main

    try:
        return main(args)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except Exception:  # what Python prints for an uncaught exception, and its exit status
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


@contextmanager
def _as_process(cwd: Path, env: Mapping[str, str], stdin: IO[bytes], out: IO[bytes],
                err: IO[bytes]) -> Iterator[None]:
    """Working directory, environment, file descriptors 0–2 and ``sys.std*`` as a new process has them."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        for fd, target in zip((0, 1, 2), (stdin, out, err), strict=True):
            os.dup2(target.fileno(), fd)
        # as Python opens them with PYTHONIOENCODING=utf-8: stdout strict, stderr backslashreplace,
        # neither line-buffered (a pipe); closefd=False: descriptors 0–2 stay this process's own
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "rb", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "wb", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "wb", closefd=False), encoding="utf-8",
                                      errors="backslashreplace")
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for fd, saved in zip((0, 1, 2), saved_fds, strict=True):
            os.dup2(saved, fd)
            os.close(saved)


def _read(file: IO[bytes]) -> str:
    """The output as ``subprocess.run(..., text=True, encoding="utf-8")`` reads it (newlines made ``\\n``)."""
    file.seek(0)
    return io.TextIOWrapper(file, encoding="utf-8").read()
