"""Agents that speak the Agent Client Protocol (``gemini --acp``, ``claude-agent-acp``, ``codex-acp``).

tunaflow is the ACP client: it spawns the agent, answers its file and permission requests under the
turn's role, and turns its session updates into ordinary engine events.
"""
