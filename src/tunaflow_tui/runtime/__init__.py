"""The running process: conversation turns, the Plan → Dev → Review cycle, recovery.

Headless: it ties core (storage, workflow, plan documents, git) to agents (engines) and reports
what happens through plain runtime events, so the terminal app and ``tunaflow run`` only show it.
Never imports textual or rich.
"""
