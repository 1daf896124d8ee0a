"""Per-engine configuration (one ``[engines.NAME]`` table)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tunaflow_tui.core.settings.numbers import Number, WholeNumber


class EngineConfig(BaseModel):
    """How to run one named engine. ``type`` defaults to the engine's name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    type: str = ""
    command: str = ""  # name on PATH or absolute path; empty = the type's default binary
    model: str = ""
    extra_args: list[str] = Field(default_factory=list)
    # nan, inf, zero or a negative number would turn a watchdog off or stop every turn at once
    timeout_idle_s: Number = Field(default=600.0, gt=0, allow_inf_nan=False)
    timeout_total_s: Number = Field(default=3600.0, gt=0, allow_inf_nan=False)
    max_output_bytes: WholeNumber = Field(default=20_000_000, gt=0)
    base_url: str = ""  # openai-compatible / ollama
    api_key_env: str = ""  # name of an env var holding the key (never the key itself)
    env: dict[str, str] = Field(default_factory=dict)
    # acp engine: the Developer's shell commands that run without asking (a command line that starts with one
    # of these words, e.g. "pytest" or "git status"); empty: every command is asked
    allow_commands: list[str] = Field(default_factory=list)
    # pty engine
    prompt_pattern: str = ""
    idle_end_s: Number = Field(default=2.0, gt=0, allow_inf_nan=False)
    # demo engine
    demo_fail_reviews: WholeNumber = 0  # how many review rounds the demo reviewer fails before passing
    demo_delay_s: Number = Field(default=0.02, ge=0, allow_inf_nan=False)  # pacing between streamed chunks

    @property
    def effective_type(self) -> str:
        """The engine type, falling back to the name (``[engines.claude]`` is a claude engine)."""
        return self.type or self.name
