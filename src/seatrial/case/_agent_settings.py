"""What a ``model:`` agent is made of: its keys in seatrial.yaml ``agents:``.

Kept here, below both the agent adapters that read it and the configuration that composes it
(``seatrial.config.AgentConfig`` extends it), so the keys are written once."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from seatrial.i18n import gettext as _

MODEL_PREFIX = "model:"
"""The spec prefix of model agents: ``model:NAME`` (NAME under seatrial.yaml ``models:``)."""

MODEL_AGENT_KEYS = (
    "system_prompt",
    "system_prompt_file",
    "tools",
    "implementations",
    "unrecorded",
    "max_turns",
    "temperature",
    "seed",
)
"""The keys of a named agent that only a ``model:`` agent takes."""


class ModelAgentSettings(BaseModel):
    """A ``model:`` agent's prompt, tools and loop settings (seatrial.yaml ``agents:``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_prompt: str | None = None
    """The system prompt (text)."""
    system_prompt_file: str | None = None
    """A file holding the system prompt, relative to the folder of seatrial.yaml."""
    tools: str | list[dict[str, Any]] | None = None
    """Tool schemas: a JSON/YAML file (OpenAI function schemas, an MCP ``tools/list`` result,
    or an OpenAPI document whose operations become tools), or an inline list."""
    implementations: dict[str, str] = Field(default_factory=dict)
    """Tool name -> ``python:MODULE_OR_FILE:FUNCTION``, ``sandbox`` or
    ``recorded:FILE.jsonl``; every tool needs one."""
    unrecorded: Literal["error", "fault"] = "error"
    """A recorded tool called with arguments it has no result for: a tool error naming the
    tool and arguments (``error``), or an injected ``empty`` result (``fault``)."""
    max_turns: int = Field(default=10, ge=1)
    """Model calls per user message; reaching it without a reply ends the attempt as ERROR
    (``limit_exceeded``)."""
    temperature: float | None = Field(default=None, ge=0)
    """Sent with every model call when set."""
    seed: int | None = None
    """Sent with every model call when set."""

    @model_validator(mode="after")
    def _one_prompt(self) -> ModelAgentSettings:
        if self.system_prompt is not None and self.system_prompt_file is not None:
            raise ValueError(_("give `system_prompt` or `system_prompt_file`, not both"))
        return self
