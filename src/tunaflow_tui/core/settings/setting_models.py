"""The typed configuration tree: roles, engines, workflow, ui and context budgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from tunaflow_tui.core.settings.engines import EngineConfig
from tunaflow_tui.core.settings.numbers import Number, Switch, WholeNumber
from tunaflow_tui.core.settings.trust import ProjectTrust

ROLE_NAMES: tuple[str, ...] = ("architect", "developer", "reviewer", "verifier", "synthesizer", "summarizer")
"""Every role that is assigned an engine."""

ENGINE_TYPES: tuple[str, ...] = ("claude", "codex", "gemini", "openai-compatible", "ollama", "pty", "acp", "demo")
"""Every engine type tunaflow can run."""


class RolesConfig(BaseModel):
    """Which named engine plays each role (``[roles]``)."""

    model_config = ConfigDict(extra="forbid")

    architect: str = "demo"
    developer: str = "demo"
    reviewer: str = "demo"
    verifier: str = "demo"
    synthesizer: str = "demo"
    summarizer: str = "demo"

    def engine_name(self, role: str) -> str:
        """The engine name for ``role``; raises ``KeyError`` for an unknown role."""
        if role not in ROLE_NAMES:
            raise KeyError(role)
        value: str = getattr(self, role)
        return value


class WorkflowConfig(BaseModel):
    """How the Plan → Dev → Review cycle behaves (``[workflow]``)."""

    model_config = ConfigDict(extra="forbid")

    doom_threshold: WholeNumber = Field(default=3, ge=1)
    auto_review: Switch = True
    auto_rework: Switch = False
    test_command: list[str] | None = None
    test_timeout_s: Number = Field(default=600.0, gt=0, allow_inf_nan=False)
    use_worktree: Switch = True
    #: run in each new worktree before the Developer starts: a string for ``/bin/sh -c``, or an argv
    worktree_setup: str | list[str] | None = None
    worktree_setup_timeout_s: Number = Field(default=900.0, gt=0)
    #: may the Developer push? Off: each engine's own permissions deny ``git push`` and a push seen
    #: after a turn stops the plan at a decision
    allow_push: Switch = False
    worktree_root: Path | None = None  # filled with <user data dir>/worktrees by load_settings
    #: how many plans' Developers and test runs work at the same time; a plan approved over it waits, queued
    max_parallel_plans: WholeNumber = Field(default=3, ge=1)


class UiConfig(BaseModel):
    """Look and feel (``[ui]``); ``keymap`` maps a binding id to its keys, e.g. ``approve = "a,ctrl+y"``."""

    model_config = ConfigDict(extra="forbid")

    theme: str = "textual-dark"
    mouse: Switch = True
    notify_desktop: Switch = False
    bell: Switch = True
    keymap: dict[str, str] = Field(default_factory=dict)
    #: "Open native CLI": in a terminal pane inside the app, or by handing the whole terminal over
    native_cli: Literal["pane", "suspend"] = "pane"
    #: lines a terminal pane keeps above its screen
    terminal_scrollback: WholeNumber = Field(default=10_000, ge=0, le=1_000_000)


class ContextConfig(BaseModel):
    """Token budgets for the ContextPack sections (``[context]``); lower-priority sections shrink first."""

    model_config = ConfigDict(extra="forbid")

    max_tokens: WholeNumber = Field(default=24_000, ge=1_000)
    persona_tokens: WholeNumber = Field(default=2_000, ge=0)
    project_tokens: WholeNumber = Field(default=600, ge=0)
    plan_tokens: WholeNumber = Field(default=5_000, ge=0)
    findings_tokens: WholeNumber = Field(default=2_500, ge=0)
    recent_turns_tokens: WholeNumber = Field(default=6_000, ge=0)
    retrieved_tokens: WholeNumber = Field(default=3_000, ge=0)
    memory_tokens: WholeNumber = Field(default=2_000, ge=0)
    links_tokens: WholeNumber = Field(default=1_000, ge=0)
    inheritance_tokens: WholeNumber = Field(default=2_000, ge=0)
    since_tokens: WholeNumber = Field(default=3_000, ge=0)
    """What entered a conversation after a resumed session's last turn (adopt and decision records, links…)."""
    recent_turns_kept: WholeNumber = Field(default=6, ge=0)
    roundtable_output_tokens: WholeNumber = Field(default=800, ge=50)


class MemoryConfig(BaseModel):
    """Project memory (``[memory]``): embeddings, retrieval, compression of long conversations, links."""

    model_config = ConfigDict(extra="forbid")

    #: embed finished messages in the background for semantic search (off: full-text search only)
    embeddings: Switch = True
    #: seconds the embedding worker process stays after its last job before it exits (and frees its memory)
    worker_idle_seconds: Number = Field(default=30.0, ge=0.5, le=3600.0)
    #: chunks of other conversations and older turns retrieved into an Architect or Developer pack
    retrieved_chunks: WholeNumber = Field(default=6, ge=0, le=50)
    #: a conversation longer than this (tokens) gets topic summaries of its older part
    compress_after_tokens: WholeNumber = Field(default=12_000, ge=500)
    #: messages at the end of a conversation that are never summarised (they travel verbatim)
    compress_keep_messages: WholeNumber = Field(default=12, ge=2)
    #: tokens of older conversation one topic summary covers
    summary_span_tokens: WholeNumber = Field(default=4_000, ge=200)
    #: cosine similarity a new conversation's first message needs to link an earlier one
    link_min_similarity: Number = Field(default=0.45, ge=0.0, le=1.0)
    #: links made for one new conversation, branch or plan
    link_max: WholeNumber = Field(default=5, ge=0, le=20)


class Settings(BaseSettings):
    """The effective configuration: defaults < user file < project file < ``TUNAFLOW_*`` env vars."""

    model_config = SettingsConfigDict(
        env_prefix="TUNAFLOW_", env_nested_delimiter="__", extra="ignore", case_sensitive=False
    )

    roles: RolesConfig = Field(default_factory=RolesConfig)
    engines: dict[str, EngineConfig] = Field(default_factory=dict)
    workflow: WorkflowConfig = Field(default_factory=WorkflowConfig)
    ui: UiConfig = Field(default_factory=UiConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    #: the configuration files that were read, lowest precedence first
    config_files: list[Path] = Field(default_factory=list, exclude=True)
    #: the project file's command keys and whether they apply (None: no project file was read)
    project_trust: ProjectTrust | None = Field(default=None, exclude=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Env vars win over the merged files (passed as init values); no dotenv, no secret dirs."""
        return (env_settings, init_settings)

    def engine_for_role(self, role: str) -> EngineConfig:
        """The configuration of the engine that plays ``role``."""
        return self.engines[self.roles.engine_name(role)]

    @property
    def using_demo_only(self) -> bool:
        """True when every role is played by the built-in demo engine (the UI says so)."""
        return all(self.engine_for_role(role).effective_type == "demo" for role in ROLE_NAMES)

    def as_toml_dict(self) -> dict[str, Any]:
        """A plain dict of the configuration (paths as strings), e.g. for ``doctor --json``."""
        return self.model_dump(mode="json")
