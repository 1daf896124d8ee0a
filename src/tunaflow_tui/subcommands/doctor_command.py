"""`tunaflow doctor [--json]`: engines, credentials (presence only), SQLite/FTS5, embeddings, terminal."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tunaflow_tui.subcommands.arguments import is_directory

SYMBOLS = {"ok": "✓", "warn": "!", "fail": "✗", "info": "·"}
SECTIONS = {"core": "Core", "engines": "Engines", "credentials": "Credentials", "flags": "CLI flags",
            "config": "Configuration", "terminal": "Terminal"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow doctor`."""
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    parser.add_argument("path", nargs="?", default=None, help="project directory (default: current)")


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 0 when the core works (SQLite with FTS5), 1 otherwise, 2 for a usage error."""
    from tunaflow_tui.agents.doctor import run_doctor

    project = Path(args.path).expanduser().resolve() if args.path else Path.cwd()
    if not is_directory(str(project)):
        from tunaflow_tui.subcommands.arguments import usage_error

        return usage_error("doctor", f"{args.path} is not a directory")
    report = run_doctor(project_dir=project)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        return 0 if report.core_ok else 1
    for key, title in SECTIONS.items():
        checks = [c for c in report.checks if c.section == key]
        if not checks:
            continue
        print(title)
        for check in checks:
            print(f"  {SYMBOLS.get(check.status, '?')} {check.name}: {check.detail}")
            if check.hint:
                print(f"      → {check.hint}")
    print("tunaflow's core works." if report.core_ok else "tunaflow cannot run: SQLite with FTS5 is required.")
    return 0 if report.core_ok else 1
