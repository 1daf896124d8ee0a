"""The built-in demo engine and the sample project it works on."""

from tunaflow_tui.agents.demo.demo_engine import DemoEngine, DemoTurn, session_id_for
from tunaflow_tui.agents.demo.sample import PLAN_TITLE, SUBTASKS, copy_demo_project, demo_project_files

__all__ = ["PLAN_TITLE", "SUBTASKS", "DemoEngine", "DemoTurn", "copy_demo_project", "demo_project_files",
           "session_id_for"]
